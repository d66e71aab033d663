//! The terminal: a view of the lab store's transcript, and a line editor.
//!
//! The scrollback is written into the page directly, entry by entry, never
//! re-rendered: the time from Enter to painted output does not grow with
//! the session. It is bounded by lines ([`MAX_LINES`]; the oldest go, with a
//! marker, while the whole transcript stays in the store). Output is text
//! nodes, never markup. A line that took a while on the lab's clock
//! reveals its output over time, as the command printed it; Ctrl-C stops it
//! there, and the lab's clock with it.
//!
//! Keys: Enter runs the line (lines typed while one runs are kept and run
//! next), Up/Down walk the history, Tab completes, Ctrl-C interrupts or
//! cancels the line, Ctrl-L clears the screen; readline's editing keys
//! (`line_edit`): Ctrl-A/E/B/F, Alt-B/F, Ctrl-U/K/W/Y, Alt-D, Ctrl-D, and
//! Ctrl-R searches the history; Ctrl+Shift+F searches the scrollback
//! (`find_bar`). A multi-line paste runs line by line, as
//! bash reads it. A pager's output (`less`, `more`) opens the pager view
//! (`pager`) over the screen when it is new; an earlier `less` left nothing
//! behind, as its alternate screen does not.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;

use clusterlab_engine::commands::Pager;
use clusterlab_engine::shell::Stream;
use clusterlab_engine::store::{Entry, Stop};
use gloo::timers::callback::{Interval, Timeout};
use wasm_bindgen::JsCast;
use web_sys::{Element, HtmlInputElement};
use yew::prelude::*;

use crate::components::find_bar::FindBar;
use crate::components::pager::PagerView;
use crate::engine::Engine;
use crate::line_edit::{self, Line};
use crate::store::{Action, LabStore};

/// How many lines the screen keeps.
pub const MAX_LINES: usize = 10_000;
/// Output longer than this many lines is written in blocks of this size.
const CHUNK_LINES: usize = 200;
/// How often revealed output advances, in real milliseconds.
const TICK_MS: u32 = 40;
/// After Enter, the line stays as typed this long (real milliseconds) while
/// the simulator answers: a quick answer then paints in the next frame,
/// with nothing drawn in between (a change drawn first would make the
/// browser handle the worker's answer only after that frame).
const ENTER_GRACE_MS: u32 = 60;

#[derive(Properties, PartialEq)]
pub struct TerminalProps {
    pub store: UseReducerHandle<LabStore>,
    pub engine: Rc<Engine>,
}

/// The clear-screen sequence tools print (`clear`, `watch`).
const CLEAR: &str = "\x1b[2J";

/// Text with every escape sequence but clear-screen removed, split at each
/// clear: the pieces, and whether the text cleared the screen before each
/// (the first piece follows what was there).
fn pieces(text: &str) -> Vec<(bool, String)> {
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
fn spoken(text: &str) -> String {
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
struct Reveal {
    index: usize,
    /// Bytes of the entry's output shown so far.
    shown: usize,
    started_ms: f64,
    period_ms: f64,
    _timer: Interval,
}

/// The scrollback, written into the page directly.
#[derive(Default)]
struct Writer {
    container: Option<Element>,
    marker: Option<Element>,
    /// The shell shown, and the transcript index its screen starts from,
    /// as last rendered.
    shell: usize,
    screen_from: usize,
    /// Entries rendered (an index into the transcript).
    rendered: usize,
    blocks: VecDeque<Block>,
    lines: usize,
    dropped: usize,
    reveal: Option<Reveal>,
    /// Whether what is written now is new (a line just run), not a screen
    /// rebuilt from the transcript.
    live: bool,
    /// A pager to open, with its text: set by new output, taken by the terminal.
    pager: Option<(Rc<String>, Pager)>,
    /// The blocks' Copy buttons, as one listener on the scrollback.
    copy_listener: Option<gloo::events::EventListener>,
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
    fn screen_rows(&self) -> usize {
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
    fn sync(&mut self, this: &Rc<RefCell<Writer>>, store: &LabStore, dispatcher: &UseReducerDispatcher<LabStore>) {
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
    fn reveal_at_ms(&self) -> Option<u64> {
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
fn scroll_down(container: Option<&Element>) {
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

/// The longest common prefix of the candidates.
fn common_prefix(candidates: &[String]) -> String {
    let Some(first) = candidates.first() else {
        return String::new();
    };
    let mut prefix = first.clone();
    for candidate in &candidates[1..] {
        while !candidate.starts_with(&prefix) {
            prefix.pop();
        }
    }
    prefix
}

#[function_component(Terminal)]
pub fn terminal(props: &TerminalProps) -> Html {
    let store = props.store.clone();
    let scrollback_ref = use_node_ref();
    // A half-typed command survives a reload (`storage::draft`).
    // The lab's record, named once (an exam's name reads the learner from storage).
    let record = use_state(|| store.lab.record_id());
    let input = use_state(|| crate::storage::draft(&record, "command-line"));
    {
        let record = (*record).clone();
        use_effect_with((*input).clone(), move |text| crate::storage::set_draft(&record, "command-line", text));
    }
    // Position while walking the history with Up/Down; None = editing a new line.
    let history_at = use_state(|| None::<usize>);
    let input_ref = use_node_ref();
    let completions = use_state(Vec::<String>::new);
    // The scrollback, written into the page directly (see `Writer`).
    let writer: Rc<RefCell<Writer>> = use_mut_ref(|| Writer { screen_from: usize::MAX, ..Writer::default() });
    // The line entered and still in the input, and the grace period's timer.
    let entered: Rc<RefCell<Option<String>>> = use_mut_ref(|| None);
    let grace: Rc<RefCell<Option<Timeout>>> = use_mut_ref(|| None);
    let redraw = use_force_update();
    // Readline's kill ring (one entry) and Ctrl-R's search: (query, the
    // history index matched, the line typed before the search).
    let killed: Rc<RefCell<String>> = use_mut_ref(String::new);
    let search = use_state(|| None::<(String, Option<usize>, String)>);
    // The pager open over the screen: its text, kind and page height.
    let pager = use_state(|| None::<(Rc<String>, Pager, usize)>);
    // Ctrl+Shift+F: the scrollback's search bar is open.
    let finding = use_state(|| false);

    {
        let scrollback_ref = scrollback_ref.clone();
        let store = store.clone();
        let this = writer.clone();
        let pager = pager.clone();
        use_effect_with(store.clone(), move |_| {
            let mut writer = this.borrow_mut();
            let first = writer.container.is_none();
            if first {
                writer.container = scrollback_ref.cast::<Element>();
                // One listener for every block's Copy button.
                if let Some(container) = writer.container.clone() {
                    let listener = gloo::events::EventListener::new(&container, "click", |event| {
                        let Some(button) =
                            event.target().and_then(|t| wasm_bindgen::JsCast::dyn_into::<Element>(t).ok()).filter(|t| t.class_name() == "copy-output")
                        else {
                            return;
                        };
                        let text = button
                            .closest(".entry")
                            .ok()
                            .flatten()
                            .and_then(|entry| entry.query_selector(".output").ok().flatten())
                            .and_then(|output| output.text_content());
                        if let Some(text) = text {
                            let _ = gloo::utils::window().navigator().clipboard().write_text(&text);
                        }
                    });
                    writer.copy_listener = Some(listener);
                }
            }
            let before = writer.rendered;
            writer.sync(&this, &store, &store.dispatcher());
            if first {
                crate::mark("clusterlab:screen");
            }

            if writer.rendered != before {
                scroll_down(writer.container.as_ref());
            }
            if let Some((text, kind)) = writer.pager.take() {
                let rows = writer.screen_rows();
                pager.set(Some((text, kind, rows)));
            }
        });
    }
    let close_pager = {
        let pager = pager.clone();
        Callback::from(move |()| pager.set(None))
    };
    {
        // Once the pager has closed and the screen is back, the keys go to the command line.
        let was_open = use_mut_ref(|| false);
        let input_ref = input_ref.clone();
        let writer = writer.clone();
        use_effect_with(pager.is_some(), move |open| {
            if !*open && *was_open.borrow() {
                scroll_down(writer.borrow().container.as_ref());
                if let Some(field) = input_ref.cast::<HtmlInputElement>() {
                    let _ = field.focus();
                }
            }
            *was_open.borrow_mut() = *open;
        });
    }
    {
        // Stops a reveal when the terminal goes.
        let writer = writer.clone();
        use_effect_with((), move |_| move || writer.borrow_mut().reveal = None);
    }

    // Escape was the last key: the next Tab leaves the terminal.
    let leaving = use_mut_ref(|| false);
    let onkeydown = {
        let store = store.clone();
        let engine = props.engine.clone();
        let input = input.clone();
        let history_at = history_at.clone();
        let completions = completions.clone();
        let writer = writer.clone();
        let entered = entered.clone();
        let grace = grace.clone();
        let redraw = redraw.clone();
        let input_ref = input_ref.clone();
        let killed = killed.clone();
        let search = search.clone();
        let leaving = leaving.clone();
        let finding = finding.clone();
        Callback::from(move |event: KeyboardEvent| {
            let key = event.key();
            let ctrl = event.ctrl_key();
            let alt = event.alt_key();
            if ctrl && event.shift_key() && key.eq_ignore_ascii_case("f") {
                event.prevent_default();
                finding.set(true);
                return;
            }
            // A modifier pressed on its own (Shift, before Shift+Tab) is
            // not a key of its own: it keeps what Escape started.
            if matches!(key.as_str(), "Shift" | "Control" | "Alt" | "Meta") {
                return;
            }
            // Tab completes; Escape, then Tab (or Shift+Tab), leaves the
            // terminal for the page's other controls: no keyboard trap.
            let escaped = std::mem::replace(&mut *leaving.borrow_mut(), key == "Escape" && search.is_none());
            if key == "Tab" && escaped {
                return;
            }
            let history = store.history();
            let field = input_ref.cast::<HtmlInputElement>();
            // The line and cursor as the input element has them now.
            let current = || {
                let text = (*input).clone();
                let offset = field.as_ref().and_then(|f| f.selection_start().ok().flatten()).unwrap_or(u32::MAX);
                let cursor = line_edit::from_utf16(&text, offset);
                Line { text, cursor }
            };
            let show = |line: Line| {
                if let Some(field) = field.as_ref() {
                    field.set_value(&line.text);
                    let at = line_edit::to_utf16(&line.text, line.cursor);
                    let _ = field.set_selection_range(at, at);
                }
                input.set(line.text);
            };
            // Ctrl-R: typing narrows the search; Enter runs the match; Esc
            // or Ctrl-G gives it up; any other key keeps it in the line.
            if let Some((query, found, typed)) = (*search).clone() {
                let printable = key.chars().count() == 1 && !ctrl && !alt;
                let find = |query: &str, before: usize| line_edit::search_back(history, query, before);
                match key.as_str() {
                    _ if printable || key == "Backspace" => {
                        event.prevent_default();
                        let mut query = query;
                        if printable {
                            query.push_str(&key);
                        } else {
                            query.pop();
                        }
                        let found = find(&query, history.len());
                        if let Some(at) = found {
                            show(Line { cursor: history[at].chars().count(), text: history[at].clone() });
                        }
                        search.set(Some((query, found, typed)));
                        return;
                    }
                    "r" | "R" if ctrl => {
                        event.prevent_default();
                        let found = find(&query, found.unwrap_or(history.len())).or(found);
                        if let Some(at) = found {
                            show(Line { cursor: history[at].chars().count(), text: history[at].clone() });
                        }
                        search.set(Some((query, found, typed)));
                        return;
                    }
                    "Escape" => {
                        event.prevent_default();
                        search.set(None);
                        show(Line { cursor: typed.chars().count(), text: typed });
                        return;
                    }
                    "g" | "G" if ctrl => {
                        event.prevent_default();
                        search.set(None);
                        show(Line { cursor: typed.chars().count(), text: typed });
                        return;
                    }
                    "Enter" => search.set(None),
                    _ => {
                        search.set(None);
                        if !ctrl {
                            return;
                        }
                    }
                }
            }
            if ctrl && (key == "r" || key == "R") {
                event.prevent_default();
                search.set(Some((String::new(), None, (*input).clone())));
                return;
            }
            if ctrl && (key == "d" || key == "D") && input.is_empty() && !store.busy() {
                // Ctrl-D on an empty line ends the shell, as `exit` does; at
                // the `> ` prompt it ends the incomplete command.
                event.prevent_default();
                if store.prompt == "> " {
                    store.dispatch(Action::Cancel(String::new()));
                } else {
                    store.dispatch(Action::Submit("exit".to_string()));
                }
                return;
            }
            // Readline's editing keys; Alt goes by the key's place, which
            // does not change with the keyboard's Alt characters.
            let letter =
                if alt { event.code().strip_prefix("Key").and_then(|k| k.chars().next()) } else { key.chars().next().filter(|_| key.chars().count() == 1) };
            if ctrl != alt {
                if let Some(letter) = letter.map(|l| l.to_ascii_lowercase()) {
                    let yank = killed.borrow().clone();
                    if let Some(edited) = line_edit::edit(&current(), letter, alt, &yank) {
                        event.prevent_default();
                        if let Some(text) = edited.killed {
                            *killed.borrow_mut() = text;
                        }
                        show(edited.line);
                        return;
                    }
                }
            }
            match key.as_str() {
                "c" | "C" if ctrl && store.busy() => {
                    event.prevent_default();
                    let at_ms = writer.borrow().reveal_at_ms().unwrap_or(0);
                    store.dispatch(Action::Interrupt { at_ms });
                }
                "c" | "C" if ctrl => {
                    event.prevent_default();
                    store.dispatch(Action::Cancel((*input).clone()));
                    input.set(String::new());
                    history_at.set(None);
                }
                "l" | "L" if ctrl => {
                    event.prevent_default();
                    store.dispatch(Action::ClearScreen);
                }
                "Enter" => {
                    event.prevent_default();
                    let line = (*input).clone();
                    // The line stays as typed until the answer or the grace period's end.
                    *entered.borrow_mut() = Some(line.clone());
                    let ends = {
                        let grace = Rc::downgrade(&grace);
                        let redraw = redraw.clone();
                        Timeout::new(ENTER_GRACE_MS, move || {
                            if let Some(grace) = grace.upgrade() {
                                grace.borrow_mut().take();
                            }
                            redraw.force_update();
                        })
                    };
                    *grace.borrow_mut() = Some(ends);
                    store.dispatch(Action::Submit(line));
                    history_at.set(None);
                    if !completions.is_empty() {
                        completions.set(Vec::new());
                    }
                }
                "ArrowUp" | "ArrowDown" => {
                    event.prevent_default();
                    if history.is_empty() {
                        return;
                    }
                    let at = match (key.as_str(), *history_at) {
                        ("ArrowUp", None) => Some(history.len() - 1),
                        ("ArrowUp", Some(at)) => Some(at.saturating_sub(1)),
                        ("ArrowDown", Some(at)) if at + 1 < history.len() => Some(at + 1),
                        _ => None,
                    };
                    input.set(at.map(|at| history[at].clone()).unwrap_or_default());
                    history_at.set(at);
                }
                "Tab" => {
                    event.prevent_default();
                    let typed = (*input).clone();
                    let input = input.clone();
                    let completions = completions.clone();
                    engine.complete(
                        typed.clone(),
                        Callback::from(move |candidates: Vec<String>| {
                            let word_start = typed.rfind(' ').map_or(0, |space| space + 1);
                            match candidates.len() {
                                0 => {}
                                1 => input.set(format!("{}{} ", &typed[..word_start], candidates[0])),
                                _ => {
                                    let prefix = common_prefix(&candidates);
                                    if prefix.len() > typed.len() - word_start {
                                        input.set(format!("{}{}", &typed[..word_start], prefix));
                                    } else {
                                        // Like bash on a second Tab: show the candidates.
                                        completions.set(candidates);
                                    }
                                }
                            }
                        }),
                    );
                }
                _ => {}
            }
        })
    };
    let onpaste = {
        let store = store.clone();
        let input = input.clone();
        let input_ref = input_ref.clone();
        Callback::from(move |event: Event| {
            let Some(pasted) = event.dyn_ref::<web_sys::ClipboardEvent>().and_then(|e| e.clipboard_data()).and_then(|d| d.get_data("text").ok()) else {
                return;
            };
            if !pasted.contains(['\n', '\r']) {
                return;
            }
            // bash reads a pasted text line by line: each complete line runs, in order.
            event.prevent_default();
            let field = input_ref.cast::<HtmlInputElement>();
            let offset = field.as_ref().and_then(|f| f.selection_start().ok().flatten()).unwrap_or(u32::MAX);
            let text = (*input).clone();
            let line = Line { cursor: line_edit::from_utf16(&text, offset), text };
            let (lines, rest) = line_edit::paste(&line, &pasted);
            for line in lines {
                store.dispatch(Action::Submit(line));
            }
            if let Some(field) = field.as_ref() {
                field.set_value(&rest.text);
            }
            input.set(rest.text);
        })
    };
    let oninput = {
        let input = input.clone();
        Callback::from(move |event: InputEvent| {
            let field: HtmlInputElement = event.target_unchecked_into();
            input.set(field.value());
        })
    };
    let focus = {
        let input_ref = input_ref.clone();
        let paging = pager.is_some();
        Callback::from(move |_: MouseEvent| {
            if paging {
                return;
            }
            // Keep a text selection usable: only focus on a plain click.
            let selecting = gloo::utils::window().get_selection().ok().flatten().is_some_and(|selection| !selection.is_collapsed());
            if !selecting {
                if let Some(field) = input_ref.cast::<HtmlInputElement>() {
                    let _ = field.focus();
                }
            }
        })
    };

    let read_only = !store.owner();
    // Screen readers hear each new output once it has printed, cut to its
    // first lines (not 3,000 lines at once); "Read last output" repeats it.
    let announcement = use_state(String::new);
    {
        let announcement = announcement.clone();
        let announced = use_mut_ref(|| None::<usize>);
        let last = store.state.transcript.len().checked_sub(1);
        let settled = last.filter(|at| *at >= store.live_from && store.revealing.is_none() && !store.busy());
        // This tab's output, and which other tabs printed (a server's results).
        // Who and where the prompt is (`user@gpu-002`): after `ssh` or `sudo -i` it is said.
        let identity = store.prompt.split(':').next().unwrap_or_default().to_string();
        let spoken_identity = use_mut_ref(|| identity.clone());
        let text = settled.map(|_| {
            let mine = store.last_entry().map_or_else(String::new, |entry| spoken(&entry.text()));
            let others: String = store.unseen.iter().map(|shell| format!("\nShell {} has new output.", shell + 1)).collect();
            mine + &others
        });
        use_effect_with(settled, move |settled| {
            if let (Some(at), Some(mut text)) = (*settled, text) {
                if *announced.borrow() != Some(at) {
                    *announced.borrow_mut() = Some(at);
                    if *spoken_identity.borrow() != identity && identity.contains('@') {
                        let (user, host) = identity.split_once('@').unwrap_or_default();
                        text += &format!("\nNow {user} on {host}.");
                        *spoken_identity.borrow_mut() = identity;
                    }
                    announcement.set(text);
                }
            }
        });
    }
    let read_last = {
        let store = store.clone();
        let announcement = announcement.clone();
        Callback::from(move |event: MouseEvent| {
            event.stop_propagation();
            let text = store.last_entry().map_or_else(|| "Nothing has been printed yet.".to_string(), |entry| spoken(&entry.text()));
            // A change of text is what a live region reads: the same output again gets a mark.
            let again = if *announcement == text { format!("{text}\u{200b}") } else { text };
            announcement.set(again);
        })
    };
    let copy_last = {
        let store = store.clone();
        Callback::from(move |event: MouseEvent| {
            event.stop_propagation();
            if let Some(entry) = store.last_entry() {
                let _ = gloo::utils::window().navigator().clipboard().write_text(&entry.text());
            }
        })
    };
    let clear = {
        let store = store.clone();
        Callback::from(move |_: MouseEvent| store.dispatch(Action::ClearScreen))
    };
    // Within the grace period after Enter, nothing changes on screen; once
    // the answer is in, or the period is over, the entered line leaves the input.
    let in_grace = store.busy() && grace.borrow().is_some();
    if !in_grace {
        if let Some(line) = entered.borrow_mut().take() {
            grace.borrow_mut().take();
            if *input == line {
                input.set(String::new());
            }
        }
    }
    // A running command owns the terminal: no prompt until it ends.
    let prompt = match (*search).as_ref() {
        Some((query, found, _)) => {
            let failed = if found.is_none() && !query.is_empty() { "failed " } else { "" };
            format!("({failed}reverse-i-search)`{query}': ")
        }
        None if store.busy() && !in_grace => String::new(),
        None => store.prompt.clone(),
    };
    let screen_ref = use_node_ref();
    let open_find = {
        let finding = finding.clone();
        Callback::from(move |event: MouseEvent| {
            event.stop_propagation();
            finding.set(true);
        })
    };
    let close_find = {
        let finding = finding.clone();
        let input_ref = input_ref.clone();
        Callback::from(move |()| {
            finding.set(false);
            if let Some(field) = input_ref.cast::<HtmlInputElement>() {
                let _ = field.focus();
            }
        })
    };

    // The lab's shells as tabs: a perftest server in one, its client in another.
    let switching = read_only || store.busy();
    let shell_tabs = store.shells.iter().map(|view| {
        let id = view.id;
        let number = id.saturating_add(1);
        let in_use = id == store.shell;
        let select = {
            let store = store.clone();
            Callback::from(move |_: MouseEvent| store.dispatch(Action::SwitchShell(id)))
        };
        let close = {
            let store = store.clone();
            Callback::from(move |_: MouseEvent| store.dispatch(Action::CloseShell(id)))
        };
        let news = store.unseen.contains(&id);
        let label = if news { format!("Shell {number}: {} (new output)", view.host) } else { format!("Shell {number}: {}", view.host) };
        html! {
            <span class={classes!("shell-tab", in_use.then_some("in-use"))}>
                <button type="button" aria-pressed={in_use.to_string()} aria-label={label} onclick={select} disabled={switching && !in_use}>
                    { format!("{number}: {}", view.host) }
                    if news { <span class="news" aria-hidden="true">{ " \u{25cf}" }</span> }
                </button>
                if store.shells.len() > 1 {
                    <button type="button" class="close-shell" aria-label={format!("Close shell {number}")} onclick={close} disabled={switching}>{ "\u{d7}" }</button>
                }
            </span>
        }
    });
    let new_shell = {
        let store = store.clone();
        Callback::from(move |_: MouseEvent| store.dispatch(Action::NewShell))
    };
    let full = store.shells.len() >= clusterlab_engine::limits::MAX_SHELLS;
    html! {
        <div class="terminal" onclick={focus}>
            <div class="shell-tabs" role="group" aria-label="Shells">
                { for shell_tabs }
                <button type="button" class="new-shell" onclick={new_shell} disabled={switching || full}
                    title={if full { "A lab has at most four shells" } else { "Open another shell on the lab" }}>{ "+ New shell" }</button>
            </div>
            <div class="terminal-bar">
                <span>{ format!("{} \u{2014} simulated", store.host) }</span>
                <span class="terminal-actions">
                    <button type="button" onclick={open_find} title="Ctrl+Shift+F">{ "Search" }</button>
                    <button type="button" onclick={read_last}>{ "Read last output" }</button>
                    <button type="button" onclick={copy_last}>{ "Copy last output" }</button>
                    <button type="button" onclick={clear} disabled={read_only}>{ "Clear" }</button>
                </span>
            </div>
            if *finding {
                <FindBar scrollback={scrollback_ref.clone()} screen={screen_ref.clone()} on_close={close_find} />
            }
            if let Some((text, kind, rows)) = (*pager).clone() {
                <PagerView {text} {kind} {rows} on_close={close_pager} />
            }
            <div ref={screen_ref} class={classes!("screen", pager.is_some().then_some("behind-pager"))} role="log" aria-live="off" aria-label="Terminal output" aria-busy={store.busy().to_string()}>
                <div class="scrollback" ref={scrollback_ref}></div>
                if !completions.is_empty() {
                    <div class="line completions">{ completions.join("  ") }</div>
                }
                <div class="line input-line">
                    <label class="prompt" for="terminal-input">{ prompt }</label>
                    <input id="terminal-input" ref={input_ref} class="terminal-input" type="text"
                        value={(*input).clone()} {onkeydown} {oninput} {onpaste} disabled={read_only}
                        autocomplete="off" autocapitalize="off" spellcheck="false"
                        aria-label="Command line" aria-describedby="terminal-keys" />
                </div>
                <p class="visually-hidden" role="status" aria-live="polite">{ (*announcement).clone() }</p>
            </div>
            // Said to everyone while the command line has the keys (style.css).
            <p id="terminal-keys" class="terminal-keys">{ "Tab completes commands. To leave the terminal, press Escape, then Tab or Shift+Tab. Ctrl+Shift+F searches the output." }</p>
        </div>
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

    #[test]
    fn common_prefix_of_candidates() {
        assert_eq!(common_prefix(&["help".into(), "hostname".into()]), "h");
        assert_eq!(common_prefix(&[]), "");
    }
}
