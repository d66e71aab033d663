//! Runs a parsed script over the input: the pattern and hold spaces,
//! cycles, branches, `s` replacements, and the step and text budgets.

use super::*;

/// One input line and whether it is the last of the stream.
pub(super) struct Input<'t> {
    pub(super) lines: Vec<&'t str>,
    /// Whether the text's last line ended without a newline.
    pub(super) unterminated: bool,
    pub(super) next: usize,
}

impl<'t> Input<'t> {
    pub(super) fn new(text: &'t str) -> Input<'t> {
        Input { lines: crate::commands::text::lines(text), unterminated: !text.is_empty() && !text.ends_with('\n'), next: 0 }
    }

    pub(super) fn read(&mut self) -> Option<&'t str> {
        let line = self.lines.get(self.next).copied();
        self.next += usize::from(line.is_some());
        line
    }

    pub(super) fn at_end(&self) -> bool {
        self.next >= self.lines.len()
    }
}

/// A run of the script over one stream.
pub(super) struct Run<'p> {
    pub(super) program: &'p [Instruction],
    pub(super) quiet: bool,
    /// Per instruction: whether its range is open, and where it ends (`+N`).
    pub(super) ranges: Vec<(bool, u64)>,
    pub(super) last_regex: Option<Regex>,
    pub(super) hold: String,
    pub(super) out: String,
    pub(super) line_number: u64,
    pub(super) steps: u64,
    pub(super) budget: regex::Budget,
    pub(super) stopped: Option<&'static str>,
}

pub(super) enum Flow {
    Continue,
    Restart,
    Quit(i32, bool),
}

impl<'p> Run<'p> {
    pub(super) fn matches(&mut self, address: &Address, space: &str, last: bool) -> bool {
        match address {
            Address::Line(n) => self.line_number == *n,
            Address::Last => last,
            Address::Step(first, step) => {
                if *step == 0 {
                    self.line_number == *first
                } else {
                    self.line_number >= *first && (self.line_number - first) % *step == 0
                }
            }
            Address::Pattern(regex) => {
                let chars: Vec<char> = space.chars().collect();
                match regex {
                    Some(regex) => {
                        let found = regex.find_at(&chars, 0).is_some();
                        self.last_regex = Some((**regex).clone());
                        found
                    }
                    None => self.last_regex.as_ref().is_some_and(|regex| regex.find_at(&chars, 0).is_some()),
                }
            }
        }
    }

    pub(super) fn selected(&mut self, index: usize, space: &str, last: bool) -> bool {
        let selector = &self.program[index].selector;
        let hit = match (&selector.start, &selector.end) {
            (None, _) => true,
            (Some(start), None) => self.matches(start, space, last),
            (Some(start), Some(end)) => {
                let (open, until) = self.ranges[index];
                if open {
                    let closes = match end {
                        RangeEnd::Address(Address::Line(n)) => self.line_number >= *n,
                        RangeEnd::Address(address) => self.matches(address, space, last),
                        RangeEnd::Plus(_) => self.line_number >= until,
                        RangeEnd::Multiple(n) => *n == 0 || self.line_number % *n == 0,
                    };
                    if closes {
                        self.ranges[index].0 = false;
                    }
                    true
                } else if (matches!(start, Address::Line(0)) && self.line_number == 1) || self.matches(start, space, last) {
                    // A range whose end is a line number at or before its
                    // start is one line long; `0,/re/` may end on line 1.
                    let one_line = match end {
                        RangeEnd::Address(Address::Line(n)) => *n <= self.line_number,
                        RangeEnd::Address(address) if matches!(start, Address::Line(0)) => self.matches(address, space, last),
                        RangeEnd::Plus(n) => *n == 0,
                        RangeEnd::Multiple(n) => *n == 0 || self.line_number % *n == 0,
                        RangeEnd::Address(_) => false,
                    };
                    if !one_line {
                        let until = match end {
                            RangeEnd::Plus(n) => self.line_number.saturating_add(*n),
                            _ => 0,
                        };
                        self.ranges[index] = (true, until);
                    }
                    true
                } else {
                    false
                }
            }
        };
        hit != selector.negated
    }

    pub(super) fn emit(&mut self, text: &str) {
        if self.out.len() + text.len() > MAX_TEXT {
            self.stopped.get_or_insert("output too large for a lab");
            return;
        }
        self.out.push_str(text);
        self.out.push('\n');
    }

    pub(super) fn jump(&self, target: &Option<String>) -> usize {
        match target {
            None => self.program.len(),
            Some(name) => self.program.iter().position(|i| i.label.as_deref() == Some(name)).unwrap_or(self.program.len()),
        }
    }

    /// Runs the script over every line of `input`; returns the exit code of `q`/`Q`.
    pub(super) fn stream(&mut self, input: &mut Input) -> Option<i32> {
        let mut space = String::new();
        loop {
            let line = input.read()?;
            space.clear();
            space.push_str(line);
            self.line_number += 1;
            let mut appended: Vec<String> = Vec::new();
            let mut substituted = false;
            let mut pc = 0;
            let mut autoprint = !self.quiet;
            let flow = loop {
                let Some(instruction) = self.program.get(pc) else { break Flow::Continue };
                self.steps += 1;
                if self.steps > MAX_STEPS || self.budget.exhausted() {
                    self.stopped.get_or_insert("too many steps for a lab");
                    return Some(1);
                }
                if self.stopped.is_some() {
                    return Some(1);
                }
                let last = input.at_end();
                if !self.selected(pc, &space, last) {
                    pc = match instruction.action {
                        Action::Block(after) => after,
                        _ => pc + 1,
                    };
                    continue;
                }
                pc += 1;
                match &instruction.action {
                    Action::Block(_) | Action::EndBlock | Action::Label => {}
                    Action::Substitute(s) => {
                        if let Some(text) = self.substitute(s, &space) {
                            space = text;
                            substituted = true;
                            if s.print {
                                let copy = space.clone();
                                self.emit(&copy);
                            }
                        }
                    }
                    Action::Transliterate(map) => {
                        space = space.chars().map(|c| map.iter().find(|(from, _)| *from == c).map_or(c, |(_, to)| *to)).collect();
                    }
                    Action::Append(text) => appended.push(text.clone()),
                    Action::Insert(text) => self.emit(text),
                    Action::Change(text) => {
                        // In a range, the text replaces the whole range, at its end.
                        let selector = &instruction.selector;
                        if selector.end.is_none() || selector.negated || !self.ranges[pc - 1].0 {
                            self.emit(text);
                        }
                        break Flow::Restart;
                    }
                    Action::Branch(target) => pc = self.jump(target),
                    Action::BranchIfSubstituted(target) => {
                        if std::mem::take(&mut substituted) {
                            pc = self.jump(target);
                        }
                    }
                    Action::BranchUnlessSubstituted(target) => {
                        if !std::mem::take(&mut substituted) {
                            pc = self.jump(target);
                        }
                    }
                    Action::Simple(command, code) => match command {
                        '=' => self.emit(&self.line_number.to_string()),
                        'd' => break Flow::Restart,
                        'D' => match space.find('\n') {
                            None => break Flow::Restart,
                            Some(at) => {
                                space.drain(..=at);
                                for text in appended.drain(..) {
                                    self.emit(&text);
                                }
                                pc = 0;
                                substituted = false;
                                continue;
                            }
                        },
                        'g' => space.clone_from(&self.hold),
                        'G' => {
                            space.push('\n');
                            space.push_str(&self.hold);
                        }
                        'h' => self.hold.clone_from(&space),
                        'H' => {
                            self.hold.push('\n');
                            self.hold.push_str(&space);
                        }
                        'x' => std::mem::swap(&mut space, &mut self.hold),
                        'z' => space.clear(),
                        'l' => {
                            let escaped = escape_visibly(&space);
                            self.emit(&escaped);
                        }
                        'p' => {
                            let copy = space.clone();
                            self.emit(&copy);
                        }
                        'P' => {
                            let first = space.split('\n').next().unwrap_or("").to_string();
                            self.emit(&first);
                        }
                        'n' => {
                            if autoprint {
                                let copy = space.clone();
                                self.emit(&copy);
                            }
                            for text in appended.drain(..) {
                                self.emit(&text);
                            }
                            match input.read() {
                                Some(line) => {
                                    space.clear();
                                    space.push_str(line);
                                    self.line_number += 1;
                                }
                                // GNU prints nothing more: the space was printed already.
                                None => {
                                    autoprint = false;
                                    break Flow::Continue;
                                }
                            }
                        }
                        'N' => match input.read() {
                            Some(line) => {
                                space.push('\n');
                                space.push_str(line);
                                self.line_number += 1;
                            }
                            // At the end, GNU prints the pattern space and stops.
                            None => break Flow::Continue,
                        },
                        'q' => break Flow::Quit(*code, true),
                        'Q' => break Flow::Quit(*code, false),
                        _ => {}
                    },
                }
                if space.len() > MAX_TEXT || self.hold.len() > MAX_TEXT {
                    self.stopped.get_or_insert("too much text for a lab");
                    return Some(1);
                }
            };
            let print = match flow {
                Flow::Continue => autoprint,
                Flow::Restart => false,
                Flow::Quit(_, print) => print && !self.quiet,
            };
            if print {
                let copy = space.clone();
                self.emit(&copy);
            }
            for text in appended {
                self.emit(&text);
            }
            if let Flow::Quit(code, _) = flow {
                return Some(code);
            }
        }
    }

    pub(super) fn substitute(&mut self, s: &Substitution, space: &str) -> Option<String> {
        let regex = match &s.regex {
            Some(regex) => {
                self.last_regex = Some((**regex).clone());
                regex.as_ref()
            }
            None => self.last_regex.as_ref()?,
        };
        let chars: Vec<char> = space.chars().collect();
        let mut out = String::new();
        let (mut at, mut copied, mut count, mut changed) = (0usize, 0usize, 0usize, false);
        while at <= chars.len() {
            let Some((start, end)) = regex.find_at(&chars, at) else { break };
            count += 1;
            if count >= s.occurrence.max(1) && (s.global || count == s.occurrence.max(1)) {
                out.extend(&chars[copied..start]);
                let groups = regex.captures(&chars, start, end);
                expand(&s.replacement, &chars, &groups, &mut out);
                copied = end;
                changed = true;
                if !s.global {
                    break;
                }
            }
            at = if end > start { end } else { end + 1 };
        }
        if !changed {
            return None;
        }
        out.extend(chars.get(copied..).unwrap_or(&[]));
        Some(out)
    }
}

/// The replacement text of one match, with GNU's case conversions.
pub(super) fn expand(pieces: &[Piece], chars: &[char], groups: &[Option<(usize, usize)>], out: &mut String) {
    let (mut mode, mut once) = ('E', None::<char>);
    let mut put = |text: &mut dyn Iterator<Item = char>, mode: char, once: &mut Option<char>| {
        for c in text {
            let c = match once.take() {
                Some('u') => c.to_ascii_uppercase(),
                Some('l') => c.to_ascii_lowercase(),
                _ => match mode {
                    'U' => c.to_ascii_uppercase(),
                    'L' => c.to_ascii_lowercase(),
                    _ => c,
                },
            };
            out.push(c);
        }
    };
    for piece in pieces {
        match piece {
            Piece::Text(text) => put(&mut text.chars(), mode, &mut once),
            Piece::Whole | Piece::Group(_) => {
                let number = if let Piece::Group(n) = piece { *n } else { 0 };
                if let Some(Some((from, to))) = groups.get(number) {
                    put(&mut chars[*from..*to].iter().copied(), mode, &mut once);
                }
            }
            Piece::Case(c @ ('u' | 'l')) => once = Some(*c),
            Piece::Case(c) => mode = *c,
        }
    }
}

/// `l`: the pattern space with non-printing characters escaped, `$` at the end.
pub(super) fn escape_visibly(space: &str) -> String {
    let mut text = String::new();
    for c in space.chars() {
        match c {
            '\\' => text.push_str("\\\\"),
            '\t' => text.push_str("\\t"),
            '\n' => text.push_str("\\n"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => text.push_str(&format!("\\{:03o}", c as u32)),
            c => text.push(c),
        }
    }
    text.push('$');
    text
}
