//! The terminal's scrollback, written into the page directly, entry by
//! entry, never re-rendered: the time from Enter to painted output does not
//! grow with the session. It is bounded by lines ([`MAX_LINES`]; the oldest
//! go, with a marker, while the whole transcript stays in the store).
//! Output is text nodes, never markup. A line that took a while on the
//! lab's clock reveals its output over time, as the command printed it.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;

use clusterlab_engine::commands::Pager;
use clusterlab_engine::shell::Stream;
use clusterlab_engine::store::{Entry, Stop};
use gloo::timers::callback::Interval;
use wasm_bindgen::JsCast;
use web_sys::Element;
use yew::prelude::*;

use crate::store::{Action, LabStore};

/// How many lines the screen keeps.
pub const MAX_LINES: usize = 10_000;
/// Output longer than this many lines is written in blocks of this size.
const CHUNK_LINES: usize = 200;
/// How often revealed output advances, in real milliseconds.
const TICK_MS: u32 = 40;
/// The clear-screen sequence tools print (`clear`, `watch`).
const CLEAR: &str = "\x1b[2J";

/// Text with every escape sequence but clear-screen removed, split at each
/// clear: the pieces, and whether the text cleared the screen before each
/// (the first piece follows what was there).
pub(crate) fn pieces(text: &str) -> Vec<(bool, String)> {
    let mut out = vec![(false, String::new())];
    let mut rest = text;
    while let Some(start) = rest.find('\x1b') {
        out.last_mut().expect("never empty").1.push_str(&rest[..start]);
        let sequence = &rest[start..];
        // CSI: ESC [ parameters final-byte.
        let length = if sequence.as_bytes().get(1) == Some(&b'[') {
            sequence[2..].find(|c: char| c.is_ascii_alphabetic()).map_or(sequence.len(), |end| end + 3)
        } else {
            sequence.len().min(2)
        };
        if sequence[..length] == *CLEAR {
            out.push((true, String::new()));
        }
        rest = &sequence[length..];
    }
    out.last_mut().expect("never empty").1.push_str(rest);
    out
}

/// Lines of a new output a screen reader hears; the rest are summed up.
const SPOKEN_LINES: usize = 12;

/// What the live region says of an output: its first lines, then how many
/// more the terminal holds. Only the last screen a redrawing command
/// (`watch`) drew, without escape codes; table borders are left out and
/// cell separators read as commas, so nvidia-smi's box is its words.
pub(crate) fn spoken(text: &str) -> String {
    let screen = pieces(text).pop().map(|(_, text)| text).unwrap_or_default();
    let border = |line: &str| line.chars().all(|c| c.is_whitespace() || "+-=|\u{2500}\u{2502}\u{2550}".contains(c));
    let cells = |line: &str| line.split(['|', '\u{2502}']).map(str::trim).filter(|cell| !cell.is_empty()).collect::<Vec<_>>().join(", ");
    let readable: Vec<String> = screen.lines().filter(|line| !line.trim().is_empty() && !border(line)).map(cells).collect();
    let lines: Vec<&str> = readable.iter().map(String::as_str).collect();
    match lines.len() {
        0 => "No output.".to_string(),
        n if n <= SPOKEN_LINES => lines.join("\n"),
        n => format!("{}\n\u{2026} and {} more lines in the terminal.", lines[..SPOKEN_LINES].join("\n"), n - SPOKEN_LINES),
    }
}

fn lines_in(text: &str) -> usize {
    text.bytes().filter(|b| *b == b'\n').count()
}

/// The last `keep` lines of `text`, and how many lines were left out.
fn last_lines(text: &str, keep: usize) -> (&str, usize) {
    let total = lines_in(text);
    if total <= keep {
        return (text, 0);
    }
    let skip = total - keep;
    let at = text.match_indices('\n').nth(skip - 1).map_or(0, |(at, _)| at + 1);
    (&text[at..], skip)
}

/// One entry on the screen.
struct Block {
    index: usize,
    entry: Rc<Entry>,
    element: Element,
    output: Element,
    lines: usize,
}

/// Output being revealed over time.
pub(crate) struct Reveal {
    index: usize,
    /// Bytes of the entry's output shown so far.
    shown: usize,
    started_ms: f64,
    period_ms: f64,
    _timer: Interval,
}

/// The scrollback, written into the page directly.
#[derive(Default)]
pub(crate) struct Writer {
    pub(crate) container: Option<Element>,
    marker: Option<Element>,
    /// The shell shown, and the transcript index its screen starts from,
    /// as last rendered.
    shell: usize,
    screen_from: usize,
    /// Entries rendered (an index into the transcript).
    pub(crate) rendered: usize,
    blocks: VecDeque<Block>,
    lines: usize,
    dropped: usize,
    pub(crate) reveal: Option<Reveal>,
    /// Whether what is written now is new (a line just run), not a screen
    /// rebuilt from the transcript.
    live: bool,
    /// A pager to open, with its text: set by new output, taken by the terminal.
    pub(crate) pager: Option<(Rc<String>, Pager)>,
    /// The blocks' Copy buttons, as one listener on the scrollback.
    pub(crate) copy_listener: Option<gloo::events::EventListener>,
}

fn now_ms() -> f64 {
    gloo::utils::window().performance().map_or(0.0, |performance| performance.now())
}

fn element(tag: &str, class: &str) -> Element {
    let element = gloo::utils::document().create_element(tag).expect("the document makes elements");
    element.set_class_name(class);
    element
}

impl Writer {
    /// A writer that has drawn nothing yet.
    pub(crate) fn new() -> Writer {
        Writer { screen_from: usize::MAX, ..Writer::default() }
    }

    fn clear_screen(&mut self) {
        if let Some(container) = &self.container {
            container.set_text_content(None);
        }
        self.blocks.clear();
        self.lines = 0;
        self.dropped = 0;
        self.marker = None;
    }

    /// Renders `entry` as a block (all its output unless `revealing`).
    fn append(&mut self, index: usize, entry: &Rc<Entry>, revealing: bool) {
        let Some(container) = self.container.clone() else { return };
        let block = element("div", "entry");
        // The height the browser assumes until it lays the block out (it
        // skips offscreen blocks): its lines, so that scrolling to the end
        // lands at the end.
        let lines = if revealing { 1 } else { (1 + entry.line_count()).min(MAX_LINES + 1) };
        let _ = block.set_attribute("style", &format!("--lines:{lines}"));
        if entry.is_printed() {
            // Text a server printed as a client elsewhere ended it: no command line.
            let output = element("div", "output");
            let _ = block.append_child(&output);
            let _ = container.append_child(&block);
            self.blocks.push_back(Block { index, entry: entry.clone(), element: block, output, lines: 0 });
            self.write_output(0, entry.text().len());
            self.bound();
            return;
        }
        let command = element("div", "line command");
        let prompt = element("span", "prompt");
        prompt.set_text_content(Some(&entry.prompt));
        let typed = element("span", "typed");
        typed.set_text_content(Some(&entry.line));
        let _ = command.append_child(&prompt);
        let _ = command.append_child(&typed);
        if entry.stopped == Some(Stop::Cancelled) {
            let _ = command.append_child(&gloo::utils::document().create_text_node("^C"));
        }
        if !entry.output.is_empty() {
            // Copies this block's output (the terminal bar's button is the keyboard's way).
            let copy = element("button", "copy-output");
            let _ = copy.set_attribute("type", "button");
            let _ = copy.set_attribute("tabindex", "-1");
            let _ = copy.set_attribute("aria-label", "Copy this output");
            copy.set_text_content(Some("Copy"));
            let _ = command.append_child(&copy);
        }
        let _ = block.append_child(&command);
        let output = element("div", "output");
        let _ = block.append_child(&output);
        let _ = container.append_child(&block);
        self.blocks.push_back(Block { index, entry: entry.clone(), element: block, output, lines: 1 });
        self.lines += 1;
        if !revealing {
            let len = entry.output.iter().map(|(_, text)| text.len()).sum();
            self.write_output(0, len);
            self.finish_block();
        }
        self.bound();
    }

    /// Writes the newest block's output from byte `from` to byte `to`.
    fn write_output(&mut self, from: usize, to: usize) {
        let Some(block) = self.blocks.back() else { return };
        let entry = block.entry.clone();
        let mut at = 0;
        for (stream, text) in &entry.output {
            let (start, end) = (at, at + text.len());
            at = end;
            if end <= from || start >= to {
                continue;
            }
            let mut cut_from = from.saturating_sub(start);
            let mut cut_to = (to - start).min(text.len());
            while !text.is_char_boundary(cut_from) {
                cut_from -= 1;
            }
            while !text.is_char_boundary(cut_to) {
                cut_to -= 1;
            }
            if let Stream::Pager(kind) = stream {
                // The pager gets its whole text once, when it first shows.
                let fits = lines_in(text) < self.screen_rows();
                let paged = match kind {
                    Pager::Less { quit_if_one_screen, .. } => !(*quit_if_one_screen && fits),
                    Pager::More => !fits,
                };
                if paged && self.live && cut_from == 0 && self.pager.is_none() {
                    self.pager = Some((Rc::new(text.clone()), *kind));
                }
                // less restores the screen when it quits; more leaves its text.
                if paged && matches!(kind, Pager::Less { .. }) {
                    continue;
                }
            }
            for (clears, piece) in pieces(&text[cut_from..cut_to]) {
                if clears {
                    self.clear_before_newest();
                }
                self.write_piece(*stream, &piece);
            }
        }
    }

    /// How many lines the screen shows (the pager's page).
    pub(crate) fn screen_rows(&self) -> usize {
        let Some(screen) = self.container.as_ref().and_then(|container| container.parent_element()) else { return 24 };
        // 12.5px type at line-height 1.35, as the stylesheet sets it.
        let line = 12.5 * 1.35;
        (((f64::from(screen.client_height()) - 20.0) / line).floor() as usize).max(5)
    }

    fn write_piece(&mut self, stream: Stream, text: &str) {
        if text.is_empty() {
            return;
        }
        let Some(block) = self.blocks.back_mut() else { return };
        // A single output longer than the screen keeps its last lines.
        let (text, skipped) = last_lines(text, MAX_LINES);
        let class = if stream == Stream::Stderr { "stderr" } else { "stdout" };
        let added = lines_in(text);
        if added <= CHUNK_LINES || !text.ends_with('\n') {
            let span = element("span", class);
            span.set_text_content(Some(text));
            let _ = block.output.append_child(&span);
        } else {
            // Long output in blocks of lines the browser lays out only when
            // they scroll into view.
            let mut rest = text;
            while !rest.is_empty() {
                let end = rest.match_indices('\n').nth(CHUNK_LINES - 1).map_or(rest.len(), |(at, _)| at + 1);
                let chunk = element("div", &format!("{class} chunk"));
                let _ = chunk.set_attribute("style", &format!("--lines:{}", lines_in(&rest[..end])));
                chunk.set_text_content(Some(&rest[..end]));
                let _ = block.output.append_child(&chunk);
                rest = &rest[end..];
            }
        }
        block.lines += added;
        self.lines += added;
        self.dropped += skipped;
    }

    /// `ESC[2J` in the newest block: everything before it goes.
    fn clear_before_newest(&mut self) {
        let Some(newest) = self.blocks.pop_back() else { return };
        for block in self.blocks.drain(..) {
            block.element.remove();
        }
        newest.output.set_text_content(None);
        if let Some(marker) = self.marker.take() {
            marker.remove();
        }
        self.dropped = 0;
        self.lines = 1;
        self.blocks.push_back(Block { lines: 1, ..newest });
    }

    fn finish_block(&mut self) {
        let Some(block) = self.blocks.back_mut() else { return };
        if block.entry.stopped == Some(Stop::Interrupted) {
            let interrupted = element("div", "line stdout");
            interrupted.set_text_content(Some("^C"));
            let _ = block.element.append_child(&interrupted);
            block.lines += 1;
            self.lines += 1;
        }
    }

    /// Drops the oldest blocks beyond MAX_LINES, with a marker that says so.
    fn bound(&mut self) {
        while self.lines > MAX_LINES && self.blocks.len() > 1 {
            let Some(oldest) = self.blocks.pop_front() else { break };
            oldest.element.remove();
            self.lines -= oldest.lines;
            self.dropped += oldest.lines;
        }
        if self.dropped == 0 {
            return;
        }
        let Some(container) = &self.container else { return };
        let marker = self.marker.get_or_insert_with(|| {
            let marker = element("div", "line dropped");
            let _ = container.insert_before(&marker, container.first_child().as_ref());
            marker
        });
        marker.set_text_content(Some(&format!("[{} earlier lines are not shown here; the whole transcript is kept with your lab]", self.dropped)));
    }

    /// Brings the screen in line with the store. `this` is the writer
    /// itself, for the timer that reveals output.
    pub(crate) fn sync(&mut self, this: &Rc<RefCell<Writer>>, store: &LabStore, dispatcher: &UseReducerDispatcher<LabStore>) {
        let transcript = &store.state.transcript;
        let replaced = self.blocks.iter().any(|block| transcript.get(block.index).is_none_or(|entry| !Rc::ptr_eq(entry, &block.entry)));
        let screen_from = store.screen_start();
        // Lines added to a drawn screen are new; a rebuilt screen (the first
        // draw, a reload, Ctrl-L, another tab) shows the past.
        self.live = true;
        if screen_from != self.screen_from || store.shell != self.shell || transcript.len() < self.rendered || replaced {
            self.live = false;
            self.reveal = None;
            self.clear_screen();
            self.screen_from = screen_from;
            self.shell = store.shell;
            self.rendered = self.first_shown(store);
        }
        if self.reveal.as_ref().is_some_and(|reveal| store.revealing != Some(reveal.index)) {
            // Interrupted: the output stays as far as it got.
            self.reveal = None;
        }
        while self.rendered < transcript.len() {
            let index = self.rendered;
            self.rendered += 1;
            let entry = transcript[index].clone();
            if entry.shell != self.shell {
                continue;
            }
            let revealing = store.revealing == Some(index);
            self.append(index, &entry, revealing);
            if revealing {
                self.start_reveal(this.clone(), index, &entry, dispatcher.clone());
            }
        }
    }

    /// Where a rebuilt screen starts: at the last clear, and no more than
    /// MAX_LINES back.
    fn first_shown(&mut self, store: &LabStore) -> usize {
        let transcript = &store.state.transcript;
        let mut lines = 0;
        let mut first = transcript.len();
        while first > self.screen_from {
            let entry = &transcript[first - 1];
            if entry.shell != self.shell {
                first -= 1;
                continue;
            }
            let text = entry.text();
            if lines >= MAX_LINES {
                break;
            }
            first -= 1;
            lines += 1 + lines_in(&text);
            if text.contains(CLEAR) {
                break;
            }
        }
        // What the bound leaves out is counted as dropped, and said so.
        let shell = self.shell;
        self.dropped = transcript[self.screen_from.min(first)..first].iter().filter(|entry| entry.shell == shell).map(|entry| 1 + entry.line_count()).sum();
        self.bound();
        first
    }

    fn start_reveal(&mut self, this: Rc<RefCell<Writer>>, index: usize, entry: &Rc<Entry>, dispatcher: UseReducerDispatcher<LabStore>) {
        // Revealed over a tenth of the simulated time, 0.4 s to 4 s.
        let period_ms = (entry.duration_ms / 10).clamp(400, 4000) as f64;
        let this = Rc::downgrade(&this);
        let timer = Interval::new(TICK_MS, move || {
            let Some(this) = this.upgrade() else { return };
            let done = this.borrow_mut().advance_reveal();
            if done {
                dispatcher.dispatch(Action::Revealed);
            }
        });
        self.reveal = Some(Reveal { index, shown: 0, started_ms: now_ms(), period_ms, _timer: timer });
    }

    /// The simulated milliseconds into the revealed line now.
    pub(crate) fn reveal_at_ms(&self) -> Option<u64> {
        let reveal = self.reveal.as_ref()?;
        let block = self.blocks.back()?;
        let fraction = ((now_ms() - reveal.started_ms) / reveal.period_ms).clamp(0.0, 1.0);
        Some((fraction * block.entry.duration_ms as f64) as u64)
    }

    /// Shows what the command had printed by now; true when it is all shown.
    fn advance_reveal(&mut self) -> bool {
        let (Some(at_ms), Some(block)) = (self.reveal_at_ms(), self.blocks.back()) else { return false };
        let entry = block.entry.clone();
        let total: usize = entry.output.iter().map(|(_, text)| text.len()).sum();
        let target = if at_ms >= entry.duration_ms { total } else { printed_by(&entry, at_ms) };
        let shown = self.reveal.as_ref().map_or(0, |reveal| reveal.shown);
        if target > shown {
            self.write_output(shown, target);
            if let Some(reveal) = self.reveal.as_mut() {
                reveal.shown = target;
            }
            self.bound();
            scroll_down(self.container.as_ref());
        }
        if target >= total {
            self.reveal = None;
            self.finish_block();
            return true;
        }
        false
    }
}

/// Bytes of `entry`'s output printed by `at_ms`: each command's output
/// spread evenly over the time it ran, cut at a line's end.
fn printed_by(entry: &Entry, at_ms: u64) -> usize {
    let (mut from_ms, mut from_bytes) = (0u64, 0usize);
    for &(to_ms, to_bytes) in &entry.timeline {
        if at_ms < to_ms {
            let share = (at_ms - from_ms) as f64 / (to_ms - from_ms).max(1) as f64;
            let bytes = from_bytes + ((to_bytes - from_bytes) as f64 * share) as usize;
            let text = entry.text();
            let bytes = bytes.min(text.len());
            return text[..bytes].rfind('\n').map_or(from_bytes, |end| (end + 1).max(from_bytes));
        }
        (from_ms, from_bytes) = (to_ms, to_bytes);
    }
    from_bytes
}

/// Scrolls the screen to its end, and again in the frame after the next,
/// once the browser has laid out the blocks it had only estimated (it lays
/// out an offscreen block when it decides it is shown, after the next
/// frame's callbacks).
pub(crate) fn scroll_down(container: Option<&Element>) {
    if let Some(screen) = container.and_then(|container| container.parent_element()) {
        screen.set_scroll_top(screen.scroll_height());
        let later = screen.clone();
        let again = wasm_bindgen::closure::Closure::once_into_js(move || {
            later.set_scroll_top(later.scroll_height());
            let last = later.clone();
            let settled = wasm_bindgen::closure::Closure::once_into_js(move || {
                last.set_scroll_top(last.scroll_height());
                // At the prompt, the window shows the screen's end, where the command line is.
                if gloo::utils::document().active_element().is_some_and(|element| element.id() == "terminal-input") {
                    last.scroll_into_view_with_bool(false);
                }
            });
            let _ = gloo::utils::window().request_animation_frame(settled.unchecked_ref());
        });
        let _ = gloo::utils::window().request_animation_frame(again.unchecked_ref());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clear_sequences_split_and_other_escapes_go() {
        assert_eq!(pieces("a\x1b[1mb\x1b[H\x1b[2Jc"), vec![(false, "ab".to_string()), (true, "c".to_string())]);
        assert_eq!(pieces("plain"), vec![(false, "plain".to_string())]);
    }

    #[test]
    fn last_lines_of_a_long_text() {
        assert_eq!(last_lines("a\nb\nc\n", 2), ("b\nc\n", 1));
        assert_eq!(last_lines("a\n", 5), ("a\n", 0));
    }

    #[test]
    fn long_outputs_are_spoken_in_part() {
        assert_eq!(spoken(""), "No output.");
        assert_eq!(spoken("a\nb\n"), "a\nb");
        // Borders go, cells are read as a list, only watch's last screen counts.
        assert_eq!(spoken("+-----+----+\n| GPU | On |\n|=====+====|\n"), "GPU, On");
        assert_eq!(spoken("Every 2.0s: x\n\nold\x1b[H\x1b[2JEvery 2.0s: x\n\nnew\n"), "Every 2.0s: x\nnew");
        let long: String = (0..40).map(|n| format!("line {n}\n")).collect();
        assert!(spoken(&long).ends_with("line 11\n\u{2026} and 28 more lines in the terminal."));
    }
}
