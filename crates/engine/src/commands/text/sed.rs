//! `sed`: GNU sed's stream editor for the edits operators make to tool
//! output and config files: addresses (`N`, `$`, `/re/`, `first~step`,
//! ranges, `addr,+N`, `0,/re/`, `!`), blocks, labels and branches, the hold
//! space, `s` with `& \1..\9 \U \L \u \l \E` and flags `g p N I`, `y`, `a i
//! c`, `= l n N p P d D q Q`, `-n -e -f -E -s -i[SUFFIX]`. GNU's messages
//! (`-e expression #1, char 5: unterminated `s' command`) and statuses: 1
//! for a bad script, 2 for an unreadable input, 4 for an input that cannot
//! be rewritten in place. A script runs at most `MAX_STEPS` commands.

use super::regex::{self, Regex, Syntax};
use super::{read_file, usage_error, Dialect, Opt, Parsed};
use crate::commands::files::View;
use crate::commands::options::getopt;
use crate::commands::{Command, Example, Flag, Invocation, Output, Signature};
use crate::model::change::Change;

pub struct Sed;

static SIGNATURE: Signature = Signature {
    name: "sed",
    summary: "stream editor for filtering and transforming text",
    usage: "sed [OPTION]... {script-only-if-no-other-script} [input-file]...",
    flags: &[
        Flag { short: Some('n'), long: Some("quiet"), value: None, help: "suppress automatic printing of pattern space" },
        Flag { short: None, long: Some("silent"), value: None, help: "same as -n" },
        Flag { short: Some('e'), long: Some("expression"), value: Some("script"), help: "add the script to the commands to be executed" },
        Flag { short: Some('f'), long: Some("file"), value: Some("script-file"), help: "add the contents of script-file to the commands to be executed" },
        Flag { short: Some('i'), long: Some("in-place"), value: Some("SUFFIX"), help: "edit files in place (makes backup if SUFFIX supplied)" },
        Flag { short: Some('E'), long: Some("regexp-extended"), value: None, help: "use extended regular expressions in the script" },
        Flag { short: Some('r'), long: None, value: None, help: "same as -E" },
        Flag { short: Some('s'), long: Some("separate"), value: None, help: "consider files as separate rather than as a single continuous long stream." },
        Flag { short: Some('l'), long: Some("line-length"), value: Some("N"), help: "specify the desired line-wrap length for the `l' command" },
        Flag {
            short: Some('u'),
            long: Some("unbuffered"),
            value: None,
            help: "load minimal amounts of data from the input files and flush the output buffers more often",
        },
        Flag { short: None, long: Some("posix"), value: None, help: "disable all GNU extensions." },
        Flag { short: None, long: Some("debug"), value: None, help: "annotate program execution" },
        Flag { short: None, long: Some("sandbox"), value: None, help: "operate in sandbox mode (disable e/r/w commands)." },
        Flag { short: None, long: Some("follow-symlinks"), value: None, help: "follow symlinks when processing in place" },
    ],
    examples: &[
        Example { command: "nvidia-smi -q | sed -n '/ECC Errors/,/Aggregate/p'", description: "print one section of a long report" },
        Example { command: "ibstat | sed -n 's/.*Rate: //p'", description: "the rate of every port, nothing else" },
        Example { command: "sed -i 's/^NCCL_IB_HCA=.*/NCCL_IB_HCA=mlx5_0/' ~/.nccl.conf", description: "edit a file in place" },
    ],
};

const DIALECT: Dialect = Dialect { usage_status: 1, usage_line: None, numeric_option: false, optional_values: &["in-place"] };

const MAX_STEPS: u64 = crate::limits::MAX_SED_STEPS;
/// The most text the pattern and hold spaces and the output may hold.
const MAX_TEXT: usize = crate::limits::MAX_OUTPUT_BYTES;

#[derive(Clone, Debug)]
enum Address {
    Line(u64),
    Last,
    Pattern(Option<Box<Regex>>),
    /// `first~step`.
    Step(u64, u64),
}

#[derive(Clone, Debug)]
enum RangeEnd {
    Address(Address),
    /// `addr1,+N`.
    Plus(u64),
    /// `addr1,~N`: up to the next line number that is a multiple of N.
    Multiple(u64),
}

#[derive(Clone, Debug)]
struct Selector {
    start: Option<Address>,
    end: Option<RangeEnd>,
    negated: bool,
}

#[derive(Clone, Debug)]
enum Piece {
    Text(String),
    Whole,
    Group(usize),
    /// `\U \L \E`: the case of what follows; `\u \l`: of the next character.
    Case(char),
}

#[derive(Clone, Debug)]
struct Substitution {
    regex: Option<Box<Regex>>,
    replacement: Vec<Piece>,
    global: bool,
    print: bool,
    occurrence: usize,
}

#[derive(Clone, Debug)]
enum Action {
    Block(usize),
    EndBlock,
    Substitute(Substitution),
    Transliterate(Vec<(char, char)>),
    Append(String),
    Insert(String),
    Change(String),
    Label,
    Branch(Option<String>),
    BranchIfSubstituted(Option<String>),
    BranchUnlessSubstituted(Option<String>),
    /// One of `= d D g G h H l n N p P q Q x z`, with q's and Q's exit code.
    Simple(char, i32),
}

#[derive(Clone, Debug)]
struct Instruction {
    selector: Selector,
    action: Action,
    label: Option<String>,
}

/// A script error, GNU's way: where (`-e expression #1, char 5`) and what.
struct ScriptError {
    at: usize,
    message: String,
}

fn fail<T>(at: usize, message: impl Into<String>) -> Result<T, ScriptError> {
    Err(ScriptError { at, message: message.into() })
}

struct ScriptParser {
    chars: Vec<char>,
    at: usize,
    syntax: Syntax,
    /// The script's patterns share one matching budget.
    budget: regex::Budget,
}

impl ScriptParser {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.at).copied()
    }

    fn next(&mut self) -> Option<char> {
        let c = self.peek();
        if c.is_some() {
            self.at += 1;
        }
        c
    }

    fn skip_blanks(&mut self) {
        while matches!(self.peek(), Some(' ' | '\t')) {
            self.at += 1;
        }
    }

    fn number(&mut self) -> u64 {
        let mut value: u64 = 0;
        while let Some(digit) = self.peek().and_then(|c| c.to_digit(10)) {
            value = value.saturating_mul(10).saturating_add(u64::from(digit));
            self.at += 1;
        }
        value
    }

    /// Text up to an unescaped `delimiter`, with `\delimiter` unescaped and
    /// `\n` a newline; other escapes are kept for the regex or replacement.
    fn delimited(&mut self, delimiter: char, command: char) -> Result<String, ScriptError> {
        let mut text = String::new();
        loop {
            match self.next() {
                None => return fail(self.at, format!("unterminated `{command}' command")),
                Some(c) if c == delimiter => return Ok(text),
                Some('\\') => match self.next() {
                    None => return fail(self.at, format!("unterminated `{command}' command")),
                    Some(c) if c == delimiter => text.push(c),
                    Some('n') => text.push('\n'),
                    Some(c) => {
                        text.push('\\');
                        text.push(c);
                    }
                },
                Some('\n') if command != 's' && command != 'y' => return fail(self.at, "unterminated address regex".to_string()),
                Some(c) => text.push(c),
            }
        }
    }

    fn regex(&self, pattern: &str, fold: bool) -> Result<Option<Box<Regex>>, ScriptError> {
        if pattern.is_empty() {
            // The empty regex: the last one used, at run time.
            return Ok(None);
        }
        match Regex::new(pattern, self.syntax, fold) {
            Ok(regex) => Ok(Some(Box::new(regex.sharing(&self.budget)))),
            Err(error) => fail(self.at, error.message),
        }
    }

    fn address(&mut self) -> Result<Option<Address>, ScriptError> {
        match self.peek() {
            Some(c) if c.is_ascii_digit() => {
                let first = self.number();
                if self.peek() == Some('~') {
                    self.at += 1;
                    let step = self.number();
                    return Ok(Some(Address::Step(first, step)));
                }
                Ok(Some(Address::Line(first)))
            }
            Some('$') => {
                self.at += 1;
                Ok(Some(Address::Last))
            }
            Some('/') | Some('\\') => {
                let delimiter = if self.next() == Some('\\') { self.next().unwrap_or('\\') } else { '/' };
                let pattern = self.delimited(delimiter, 'a')?;
                let mut fold = false;
                while matches!(self.peek(), Some('I' | 'M')) {
                    fold |= self.next() == Some('I');
                }
                Ok(Some(Address::Pattern(self.regex(&pattern, fold)?)))
            }
            _ => Ok(None),
        }
    }

    fn selector(&mut self) -> Result<Selector, ScriptError> {
        let start = self.address()?;
        let mut end = None;
        if start.is_some() && self.peek() == Some(',') {
            self.at += 1;
            self.skip_blanks();
            end = Some(match self.peek() {
                Some('+') => {
                    self.at += 1;
                    RangeEnd::Plus(self.number())
                }
                Some('~') => {
                    self.at += 1;
                    RangeEnd::Multiple(self.number())
                }
                _ => match self.address()? {
                    Some(address) => RangeEnd::Address(address),
                    None => return fail(self.at, "unexpected `,'"),
                },
            });
        }
        if matches!(start, Some(Address::Line(0))) && !matches!(end, Some(RangeEnd::Address(Address::Pattern(_)))) {
            return fail(self.at, "invalid usage of line address 0");
        }
        self.skip_blanks();
        let mut negated = false;
        while self.peek() == Some('!') {
            self.at += 1;
            negated = true;
            self.skip_blanks();
        }
        Ok(Selector { start, end, negated })
    }

    /// The rest of the line: a label, a file name, the text of `a i c`.
    fn rest_of_line(&mut self) -> String {
        let mut text = String::new();
        while let Some(c) = self.peek() {
            if c == '\n' || c == ';' {
                break;
            }
            text.push(c);
            self.at += 1;
        }
        text.trim().to_string()
    }

    /// `a text`, `a\` newline `text`, with `\` continuing lines.
    fn text_argument(&mut self) -> String {
        self.skip_blanks();
        if self.peek() == Some('\\') {
            self.at += 1;
            if self.peek() == Some('\n') {
                self.at += 1;
            }
        }
        let mut text = String::new();
        while let Some(c) = self.next() {
            match c {
                '\\' => match self.next() {
                    Some('t') => text.push('\t'),
                    Some(c) => text.push(c),
                    None => {}
                },
                '\n' => break,
                c => text.push(c),
            }
        }
        text
    }

    fn end_of_command(&mut self) -> Result<(), ScriptError> {
        self.skip_blanks();
        match self.peek() {
            None | Some('\n' | ';' | '}' | '#') => Ok(()),
            Some(_) => fail(self.at + 1, "extra characters after command"),
        }
    }

    fn replacement(&self, text: &str, groups: Option<usize>) -> Result<Vec<Piece>, ScriptError> {
        let mut pieces = Vec::new();
        let mut literal = String::new();
        let mut chars = text.chars();
        let flush = |literal: &mut String, pieces: &mut Vec<Piece>| {
            if !literal.is_empty() {
                pieces.push(Piece::Text(std::mem::take(literal)));
            }
        };
        while let Some(c) = chars.next() {
            match c {
                '&' => {
                    flush(&mut literal, &mut pieces);
                    pieces.push(Piece::Whole);
                }
                '\\' => match chars.next() {
                    Some(d @ '1'..='9') => {
                        let number = d as usize - '0' as usize;
                        if groups.is_some_and(|groups| number > groups) {
                            return fail(self.at, format!("invalid reference \\{number} on `s' command's RHS"));
                        }
                        flush(&mut literal, &mut pieces);
                        pieces.push(Piece::Group(number));
                    }
                    Some('0') => {
                        flush(&mut literal, &mut pieces);
                        pieces.push(Piece::Whole);
                    }
                    Some(case @ ('U' | 'L' | 'E' | 'u' | 'l')) => {
                        flush(&mut literal, &mut pieces);
                        pieces.push(Piece::Case(case));
                    }
                    Some('n') => literal.push('\n'),
                    Some('t') => literal.push('\t'),
                    Some(other) => literal.push(other),
                    None => literal.push('\\'),
                },
                c => literal.push(c),
            }
        }
        flush(&mut literal, &mut pieces);
        Ok(pieces)
    }

    fn substitution(&mut self) -> Result<Action, ScriptError> {
        let Some(delimiter) = self.next().filter(|c| *c != '\n' && *c != '\\') else {
            return fail(self.at, "unterminated `s' command");
        };
        let pattern = self.delimited(delimiter, 's')?;
        let replacement = self.delimited(delimiter, 's')?;
        let (mut global, mut print, mut fold, mut occurrence) = (false, false, false, 0usize);
        loop {
            match self.peek() {
                Some('g') => global = true,
                Some('p') => print = true,
                Some('i' | 'I') => fold = true,
                Some('m' | 'M' | 'e') => {}
                Some(c) if c.is_ascii_digit() => {
                    let number = self.number();
                    if number == 0 {
                        return fail(self.at, "number option to `s' command may not be zero");
                    }
                    occurrence = usize::try_from(number).unwrap_or(usize::MAX);
                    continue;
                }
                Some('w') => return fail(self.at + 1, "writing files from `s' is not available in a lab"),
                None | Some('\n' | ';' | '}' | '#' | ' ' | '\t') => break,
                Some(_) => return fail(self.at + 1, "unknown option to `s'"),
            }
            self.at += 1;
        }
        let regex = self.regex(&pattern, fold)?;
        let replacement = self.replacement(&replacement, regex.as_ref().map(|r| r.groups))?;
        Ok(Action::Substitute(Substitution { regex, replacement, global, print, occurrence }))
    }

    fn transliteration(&mut self) -> Result<Action, ScriptError> {
        let Some(delimiter) = self.next().filter(|c| *c != '\n' && *c != '\\') else {
            return fail(self.at, "unterminated `y' command");
        };
        let unescape = |text: String| -> Vec<char> {
            let mut out = Vec::new();
            let mut chars = text.chars();
            while let Some(c) = chars.next() {
                match (c, chars.clone().next()) {
                    ('\\', Some('\\')) => {
                        chars.next();
                        out.push('\\');
                    }
                    ('\\', Some('t')) => {
                        chars.next();
                        out.push('\t');
                    }
                    (c, _) => out.push(c),
                }
            }
            out
        };
        let from = unescape(self.delimited(delimiter, 'y')?);
        let to = unescape(self.delimited(delimiter, 'y')?);
        if from.len() != to.len() {
            return fail(self.at, "strings for `y' command are different lengths");
        }
        Ok(Action::Transliterate(from.into_iter().zip(to).collect()))
    }

    fn script(&mut self) -> Result<Vec<Instruction>, ScriptError> {
        let mut program: Vec<Instruction> = Vec::new();
        let mut open_blocks: Vec<usize> = Vec::new();
        loop {
            while matches!(self.peek(), Some(' ' | '\t' | '\n' | ';')) {
                self.at += 1;
            }
            if self.peek().is_none() {
                break;
            }
            let selector = self.selector()?;
            let has_address = selector.start.is_some();
            let Some(command) = self.next() else {
                return fail(self.at, "missing command");
            };
            let mut label = None;
            let action = match command {
                '{' => {
                    open_blocks.push(program.len());
                    Action::Block(0)
                }
                '}' => {
                    if has_address {
                        return fail(self.at, "} doesn't want any addresses");
                    }
                    let Some(open) = open_blocks.pop() else {
                        return fail(self.at, "unexpected `}'");
                    };
                    program[open].action = Action::Block(program.len() + 1);
                    Action::EndBlock
                }
                '#' => {
                    if has_address {
                        return fail(self.at, "comments don't accept any addresses");
                    }
                    while self.peek().is_some_and(|c| c != '\n') {
                        self.at += 1;
                    }
                    continue;
                }
                ':' => {
                    if has_address {
                        return fail(self.at, ": doesn't want any addresses");
                    }
                    let name = self.rest_of_line();
                    if name.is_empty() {
                        return fail(self.at, "\":\" lacks a label");
                    }
                    label = Some(name);
                    Action::Label
                }
                'b' | 't' | 'T' => {
                    let target = Some(self.rest_of_line()).filter(|name| !name.is_empty());
                    match command {
                        'b' => Action::Branch(target),
                        't' => Action::BranchIfSubstituted(target),
                        _ => Action::BranchUnlessSubstituted(target),
                    }
                }
                'a' => Action::Append(self.text_argument()),
                'i' => Action::Insert(self.text_argument()),
                'c' => Action::Change(self.text_argument()),
                's' => self.substitution()?,
                'y' => self.transliteration()?,
                'q' | 'Q' => {
                    if selector.end.is_some() {
                        return fail(self.at, "command only uses one address");
                    }
                    self.skip_blanks();
                    let code = i32::try_from(self.number()).unwrap_or(i32::MAX);
                    Action::Simple(command, code)
                }
                '=' | 'd' | 'D' | 'g' | 'G' | 'h' | 'H' | 'l' | 'n' | 'N' | 'p' | 'P' | 'x' | 'z' => Action::Simple(command, 0),
                'r' | 'R' | 'w' | 'W' | 'e' | 'v' | 'F' => {
                    return fail(self.at, format!("`{command}' (files and commands) is not available in a lab"));
                }
                other => return fail(self.at, format!("unknown command: `{other}'")),
            };
            if matches!(action, Action::Substitute(_) | Action::Transliterate(_) | Action::Simple(..) | Action::EndBlock) {
                self.end_of_command()?;
            }
            program.push(Instruction { selector, action, label });
        }
        if !open_blocks.is_empty() {
            // GNU reports this one at char 0.
            return fail(0, "unmatched `{'");
        }
        // Every branch must name a label the script has.
        for instruction in &program {
            if let Action::Branch(Some(name)) | Action::BranchIfSubstituted(Some(name)) | Action::BranchUnlessSubstituted(Some(name)) = &instruction.action {
                if !program.iter().any(|i| i.label.as_deref() == Some(name)) {
                    return Err(ScriptError { at: usize::MAX, message: format!("can't find label for jump to `{name}'") });
                }
            }
        }
        Ok(program)
    }
}

/// One input line and whether it is the last of the stream.
struct Input<'t> {
    lines: Vec<&'t str>,
    /// Whether the text's last line ended without a newline.
    unterminated: bool,
    next: usize,
}

impl<'t> Input<'t> {
    fn new(text: &'t str) -> Input<'t> {
        Input { lines: super::lines(text), unterminated: !text.is_empty() && !text.ends_with('\n'), next: 0 }
    }

    fn read(&mut self) -> Option<&'t str> {
        let line = self.lines.get(self.next).copied();
        self.next += usize::from(line.is_some());
        line
    }

    fn at_end(&self) -> bool {
        self.next >= self.lines.len()
    }
}

/// A run of the script over one stream.
struct Run<'p> {
    program: &'p [Instruction],
    quiet: bool,
    /// Per instruction: whether its range is open, and where it ends (`+N`).
    ranges: Vec<(bool, u64)>,
    last_regex: Option<Regex>,
    hold: String,
    out: String,
    line_number: u64,
    steps: u64,
    budget: regex::Budget,
    stopped: Option<&'static str>,
}

enum Flow {
    Continue,
    Restart,
    Quit(i32, bool),
}

impl<'p> Run<'p> {
    fn matches(&mut self, address: &Address, space: &str, last: bool) -> bool {
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

    fn selected(&mut self, index: usize, space: &str, last: bool) -> bool {
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

    fn emit(&mut self, text: &str) {
        if self.out.len() + text.len() > MAX_TEXT {
            self.stopped.get_or_insert("output too large for a lab");
            return;
        }
        self.out.push_str(text);
        self.out.push('\n');
    }

    fn jump(&self, target: &Option<String>) -> usize {
        match target {
            None => self.program.len(),
            Some(name) => self.program.iter().position(|i| i.label.as_deref() == Some(name)).unwrap_or(self.program.len()),
        }
    }

    /// Runs the script over every line of `input`; returns the exit code of `q`/`Q`.
    fn stream(&mut self, input: &mut Input) -> Option<i32> {
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

    fn substitute(&mut self, s: &Substitution, space: &str) -> Option<String> {
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
fn expand(pieces: &[Piece], chars: &[char], groups: &[Option<(usize, usize)>], out: &mut String) {
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
fn escape_visibly(space: &str) -> String {
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

fn script_error(origins: &[(usize, String)], error: ScriptError) -> Output {
    if error.at == usize::MAX {
        // GNU finds a missing label after compiling, and panics (status 4).
        return Output::error(format!("sed: {}\n", error.message), 4);
    }
    // Which -e (or -f) the position falls in, and where within it.
    let (mut start, mut name) = (0, String::from("-e expression #1"));
    for (offset, origin) in origins {
        if *offset < error.at.max(1) {
            start = *offset;
            name.clone_from(origin);
        }
    }
    Output::error(format!("sed: {name}, char {}: {}\n", error.at.saturating_sub(start), error.message), 1)
}

impl Command for Sed {
    fn signature(&self) -> &'static Signature {
        &SIGNATURE
    }

    /// GNU sed answers `--help` and a bad option with its whole usage text.
    fn run(&self, invocation: &Invocation) -> Output {
        let args = invocation.args();
        let options_end = args.iter().position(|arg| arg == "--").unwrap_or(args.len());
        if args[..options_end].iter().any(|arg| arg == "--help") {
            return Output::ok(usage());
        }
        match getopt(&SIGNATURE, &DIALECT, args) {
            Ok(parsed) => run_parsed(parsed, invocation),
            Err(output) => {
                let complaint = output.stderr.lines().next().unwrap_or_default();
                Output::error(format!("{complaint}\n{}", usage()), 1)
            }
        }
    }
}

fn run_parsed(parsed: Parsed<'static>, invocation: &Invocation) -> Output {
    let (mut quiet, mut syntax, mut separate, mut in_place) = (false, Syntax::Basic, false, None::<String>);
    let mut script = String::new();
    let mut origins: Vec<(usize, String)> = Vec::new();
    let mut expressions = 0;
    for option in &parsed.options {
        let Opt::Flag(flag, value) = option else { continue };
        match (flag.short, flag.long) {
            (Some('n'), _) | (_, Some("silent")) => quiet = true,
            (Some('E' | 'r'), _) => syntax = Syntax::Extended,
            (Some('s'), _) => separate = true,
            (Some('i'), _) => {
                in_place = Some(value.clone().unwrap_or_default());
                separate = true;
            }
            (Some('e'), _) => {
                expressions += 1;
                origins.push((script.len(), format!("-e expression #{expressions}")));
                script.push_str(value.as_deref().unwrap_or(""));
                script.push('\n');
            }
            (Some('f'), _) => {
                let file = value.as_deref().unwrap_or("");
                match read_file(invocation, file) {
                    Ok(text) => {
                        origins.push((script.len(), format!("file {file} line 1")));
                        script.push_str(&text);
                        script.push('\n');
                    }
                    Err(reason) => return Output::error(format!("sed: couldn't open file {file}: {reason}\n"), 1),
                }
            }
            _ => {}
        }
    }
    let mut operands = parsed.operands.clone();
    if origins.is_empty() {
        if operands.is_empty() {
            return Output::error(usage(), 1);
        }
        origins.push((0, "-e expression #1".to_string()));
        script = operands.remove(0);
    }
    // Positions count characters, as GNU's do.
    let char_origins: Vec<(usize, String)> = origins.iter().map(|(offset, name)| (script[..*offset].chars().count(), name.clone())).collect();
    let budget = regex::Budget::default();
    let mut parser = ScriptParser { chars: script.chars().collect(), at: 0, syntax, budget: budget.clone() };
    let program = match parser.script() {
        Ok(program) => program,
        Err(error) => return script_error(&char_origins, error),
    };
    if in_place.is_some() && operands.is_empty() {
        return usage_error("sed", &DIALECT, "no input files");
    }
    let mut run = Run {
        program: &program,
        budget,
        quiet,
        ranges: vec![(false, 0); program.len()],
        last_regex: None,
        hold: String::new(),
        out: String::new(),
        line_number: 0,
        steps: 0,
        stopped: None,
    };
    let mut output = Output::default();
    let mut status = 0;
    // The streams: standard input, every file as one, or (-s, -i) each file alone.
    let mut streams: Vec<(Option<String>, String)> = Vec::new();
    if operands.is_empty() {
        streams.push((None, invocation.stdin.to_string()));
    } else {
        let mut joined = String::new();
        for operand in &operands {
            let text = if operand == "-" && in_place.is_none() { Ok(std::borrow::Cow::Borrowed(invocation.stdin)) } else { read_file(invocation, operand) };
            match text {
                Ok(text) if separate => streams.push((Some(operand.clone()), text.into_owned())),
                Ok(text) => {
                    joined.push_str(&text);
                    if !text.is_empty() && !text.ends_with('\n') {
                        joined.push('\n');
                    }
                }
                Err(reason) => {
                    let reason = if reason == "Is a directory" {
                        "read error on ".to_string() + operand + ": Is a directory"
                    } else {
                        format!("can't read {operand}: {reason}")
                    };
                    output.stderr.push_str(&format!("sed: {reason}\n"));
                    status = 2;
                }
            }
        }
        if !separate {
            streams.push((None, joined));
        }
    }
    let view = View::for_command(invocation);
    for (file, text) in &streams {
        let mut input = Input::new(text);
        if separate {
            // Line numbers (and `$`) are each file's own.
            run.line_number = 0;
        }
        let before = run.out.len();
        let quit = run.stream(&mut input);
        // GNU keeps a missing last newline on the last line it prints.
        if input.unterminated && input.at_end() && run.out.ends_with('\n') && run.out.len() > before && quit.is_none() {
            run.out.pop();
        }
        if let (Some(suffix), Some(file)) = (&in_place, file) {
            let edited = run.out.split_off(before);
            let path = view.resolve(file);
            let writable = view.check_writable(&path).and_then(|()| view.check_room(&path, edited.len(), false));
            if let Err(reason) = writable {
                let dir = &path[..path.rfind('/').unwrap_or(0).max(1)];
                output.stderr.push_str(&format!("sed: couldn't open temporary file {}/sed{}: {reason}\n", dir.trim_end_matches('/'), temp_suffix(&path)));
                status = 4;
                break;
            }
            let node = invocation.node.hostname.clone();
            if !suffix.is_empty() {
                let backup = if suffix.contains('*') { suffix.replace('*', &super::basename::base(&path, "")) } else { format!("{path}{suffix}") };
                output.changes.push(Change::WriteFile { node: node.clone(), path: view.resolve(&backup), text: text.clone(), append: false });
            }
            output.changes.push(Change::WriteFile { node, path, text: edited, append: false });
        }
        if quit.is_some() {
            status = quit.unwrap_or(0);
            break;
        }
    }
    if let Some(reason) = run.stopped {
        output.stderr.push_str(&format!("sed: script stopped: {reason}\n"));
        status = 1;
    }
    output.stdout = run.out;
    output.status = status;
    output
}

/// The six characters GNU's mkostemp puts after `sed`: the same for the same path.
fn temp_suffix(path: &str) -> String {
    let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    let mut hash = crate::rng::stable_hash(path.as_bytes());
    (0..6)
        .map(|_| {
            let c = alphabet[(hash % alphabet.len() as u64) as usize] as char;
            hash /= alphabet.len() as u64;
            c
        })
        .collect()
}

/// GNU sed 4.9's usage text.
fn usage() -> String {
    let options: &[(&str, &str)] = &[
        ("-n, --quiet, --silent", "suppress automatic printing of pattern space"),
        ("    --debug", "annotate program execution"),
        ("-e script, --expression=script", "add the script to the commands to be executed"),
        ("-f script-file, --file=script-file", "add the contents of script-file to the commands to be executed"),
        ("--follow-symlinks", "follow symlinks when processing in place"),
        ("-i[SUFFIX], --in-place[=SUFFIX]", "edit files in place (makes backup if SUFFIX supplied)"),
        ("-l N, --line-length=N", "specify the desired line-wrap length for the `l' command"),
        ("--posix", "disable all GNU extensions."),
        ("-E, -r, --regexp-extended", "use extended regular expressions in the script\n                 (for portability use POSIX -E)."),
        ("-s, --separate", "consider files as separate rather than as a single,\n                 continuous long stream."),
        ("    --sandbox", "operate in sandbox mode (disable e/r/w commands)."),
        ("-u, --unbuffered", "load minimal amounts of data from the input files and flush\n                 the output buffers more often"),
        ("-z, --null-data", "separate lines by NUL characters"),
    ];
    let mut text = format!("Usage: {}\n\n", SIGNATURE.usage);
    for (names, help) in options {
        text += &format!("  {names}\n                 {help}\n");
    }
    text += "      --help     display this help and exit\n      --version  output version information and exit\n\n";
    text += "If no -e, --expression, -f, or --file option is given, then the first\nnon-option argument is taken as the sed script to interpret.  All\nremaining arguments are names of input files; if no input files are\nspecified, then the standard input is read.\n\n";
    text += "GNU sed home page: <https://www.gnu.org/software/sed/>.\nGeneral help using GNU software: <https://www.gnu.org/gethelp/>.\n";
    text
}

#[cfg(test)]
mod tests {
    use crate::commands::text::test_support::{echo_into, shown};
    use crate::testing::{run_on_first_node, session};

    fn sed(input: &str, args: &str) -> String {
        shown(echo_into("sed", input, args))
    }

    #[test]
    fn substitutes_with_groups_flags_and_case() {
        assert_eq!(sed("mlx5_0 up\\nmlx5_1 down", "'s/\\(mlx5_\\)\\([0-9]\\)/\\2:\\1/'"), "0:mlx5_ up\n1:mlx5_ down\n");
        assert_eq!(sed("aaa", "s/a/b/2"), "aba\n");
        assert_eq!(sed("aaa", "s/a/b/2g"), "abb\n");
        assert_eq!(sed("Rate: 400", "-E 's/([A-Za-z]+): ([0-9]+)/\\U\\1\\E=\\2 &/'"), "RATE=400 Rate: 400\n");
        assert_eq!(sed("x", "'s/x/a\\nb/'"), "a\nb\n");
        assert_eq!(sed("abc", "'s/B/[&]/I'"), "a[b]c\n");
        assert_eq!(sed("abc", "-n s/b/B/p"), "aBc\n");
        assert_eq!(sed("a.b", "'s|\\.|/|'"), "a/b\n");
        assert_eq!(sed("hello", "s/x*/-/g"), "-h-e-l-l-o-\n");
    }

    #[test]
    fn addresses_and_ranges() {
        let input = "one\\ntwo\\nthree\\nfour\\nfive";
        assert_eq!(sed(input, "-n 2p"), "two\n");
        assert_eq!(sed(input, "-n '$p'"), "five\n");
        assert_eq!(sed(input, "-n '/two/,/four/p'"), "two\nthree\nfour\n");
        assert_eq!(sed(input, "-n '2,+1p'"), "two\nthree\n");
        assert_eq!(sed(input, "-n '1~2p'"), "one\nthree\nfive\n");
        assert_eq!(sed(input, "'2,4!d'"), "two\nthree\nfour\n");
        assert_eq!(sed(input, "-n '0,/o/p'"), "one\n");
        assert_eq!(sed(input, "-n '4,2p'"), "four\n");
        assert_eq!(sed(input, "3q"), "one\ntwo\nthree\n");
        assert_eq!(sed(input, "3Q"), "one\ntwo\n");
        assert_eq!(sed(input, "-n '/t/{/e/p}'"), "three\n");
        assert_eq!(sed(input, "-n '$='"), "5\n");
    }

    #[test]
    fn text_commands_hold_space_and_branches() {
        assert_eq!(sed("a\\nb", "'1i\\\nfirst'"), "first\na\nb\n");
        assert_eq!(sed("a\\nb", "'1a after'"), "a\nafter\nb\n");
        assert_eq!(sed("a\\nb\\nc", "'2c\\\nchanged'"), "a\nchanged\nc\n");
        // tac, and joining all lines, as the sed one-liners do them.
        assert_eq!(sed("1\\n2\\n3", "-n '1!G;h;$p'"), "3\n2\n1\n");
        assert_eq!(sed("1\\n2\\n3", "':a;N;$!ba;s/\\n/,/g'"), "1,2,3\n");
        assert_eq!(sed("a b", "y/ab/xy/"), "x y\n");
        assert_eq!(sed("a\\tb", "-n l"), "a\\tb$\n");
    }

    #[test]
    fn errors_as_gnu_sed_words_them() {
        let bad = |args: &str| {
            let out = run_on_first_node(&format!("echo x | sed {args}"));
            (out.stderr, out.status)
        };
        assert_eq!(bad("'s/a/b'"), ("sed: -e expression #1, char 5: unterminated `s' command\n".into(), 1));
        assert_eq!(bad("k"), ("sed: -e expression #1, char 1: unknown command: `k'\n".into(), 1));
        assert_eq!(bad("'s/a/b/z'"), ("sed: -e expression #1, char 7: unknown option to `s'\n".into(), 1));
        assert_eq!(bad("'s/a/\\1/'"), ("sed: -e expression #1, char 7: invalid reference \\1 on `s' command's RHS\n".into(), 1));
        assert_eq!(bad("-e p -e 'y/ab/c/'"), ("sed: -e expression #2, char 7: strings for `y' command are different lengths\n".into(), 1));
        assert_eq!(bad("'{p'"), ("sed: -e expression #1, char 0: unmatched `{'\n".into(), 1));
        assert_eq!(bad("'}'"), ("sed: -e expression #1, char 1: unexpected `}'\n".into(), 1));
        assert_eq!(bad("'b nowhere'"), ("sed: can't find label for jump to `nowhere'\n".into(), 4));
        assert_eq!(bad("p nofile"), ("sed: can't read nofile: No such file or directory\n".into(), 2));
        let usage = run_on_first_node("sed");
        assert!(usage.stderr.starts_with("Usage: sed [OPTION]..."), "{}", usage.stderr);
        assert_eq!(usage.status, 1);
    }

    #[test]
    fn edits_files_in_place_and_loops_are_bounded() {
        let mut shell = session();
        let out = shell.run("printf 'NCCL_IB_HCA=mlx5_1\\nNCCL_DEBUG=WARN\\n' > nccl.conf; sed -i.bak 's/^NCCL_IB_HCA=.*/NCCL_IB_HCA=mlx5_0/' nccl.conf; cat nccl.conf nccl.conf.bak");
        assert_eq!(out.stdout(), "NCCL_IB_HCA=mlx5_0\nNCCL_DEBUG=WARN\nNCCL_IB_HCA=mlx5_1\nNCCL_DEBUG=WARN\n");
        let denied = shell.run("sed -i s/a/b/ /etc/hosts");
        assert!(denied.stderr().starts_with("sed: couldn't open temporary file /etc/sed"), "{}", denied.stderr());
        assert_eq!(denied.status, 4);
        let runaway = shell.run("echo x | sed ':a;ba'");
        assert_eq!((runaway.stderr().as_str(), runaway.status), ("sed: script stopped: too many steps for a lab\n", 1));
        // A file without a final newline keeps it missing.
        assert_eq!(shell.run("printf 'a\\nb' | sed s/b/c/").stdout(), "a\nc");
    }
}
