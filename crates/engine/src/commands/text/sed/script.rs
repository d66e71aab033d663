//! A sed script as GNU sed reads it: addresses, selectors, commands and
//! `s`'s replacement pieces, parsed with GNU's messages and char offsets.

use super::*;

#[derive(Clone, Debug)]
pub(super) enum Address {
    Line(u64),
    Last,
    Pattern(Option<Box<Regex>>),
    /// `first~step`.
    Step(u64, u64),
}

#[derive(Clone, Debug)]
pub(super) enum RangeEnd {
    Address(Address),
    /// `addr1,+N`.
    Plus(u64),
    /// `addr1,~N`: up to the next line number that is a multiple of N.
    Multiple(u64),
}

#[derive(Clone, Debug)]
pub(super) struct Selector {
    pub(super) start: Option<Address>,
    pub(super) end: Option<RangeEnd>,
    pub(super) negated: bool,
}

#[derive(Clone, Debug)]
pub(super) enum Piece {
    Text(String),
    Whole,
    Group(usize),
    /// `\U \L \E`: the case of what follows; `\u \l`: of the next character.
    Case(char),
}

#[derive(Clone, Debug)]
pub(super) struct Substitution {
    pub(super) regex: Option<Box<Regex>>,
    pub(super) replacement: Vec<Piece>,
    pub(super) global: bool,
    pub(super) print: bool,
    pub(super) occurrence: usize,
}

#[derive(Clone, Debug)]
pub(super) enum Action {
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
pub(super) struct Instruction {
    pub(super) selector: Selector,
    pub(super) action: Action,
    pub(super) label: Option<String>,
}

/// A script error, GNU's way: where (`-e expression #1, char 5`) and what.
pub(super) struct ScriptError {
    pub(super) at: usize,
    pub(super) message: String,
}

pub(super) fn fail<T>(at: usize, message: impl Into<String>) -> Result<T, ScriptError> {
    Err(ScriptError { at, message: message.into() })
}

pub(super) struct ScriptParser {
    pub(super) chars: Vec<char>,
    pub(super) at: usize,
    pub(super) syntax: Syntax,
    /// The script's patterns share one matching budget.
    pub(super) budget: regex::Budget,
}

impl ScriptParser {
    pub(super) fn peek(&self) -> Option<char> {
        self.chars.get(self.at).copied()
    }

    pub(super) fn next(&mut self) -> Option<char> {
        let c = self.peek();
        if c.is_some() {
            self.at += 1;
        }
        c
    }

    pub(super) fn skip_blanks(&mut self) {
        while matches!(self.peek(), Some(' ' | '\t')) {
            self.at += 1;
        }
    }

    pub(super) fn number(&mut self) -> u64 {
        let mut value: u64 = 0;
        while let Some(digit) = self.peek().and_then(|c| c.to_digit(10)) {
            value = value.saturating_mul(10).saturating_add(u64::from(digit));
            self.at += 1;
        }
        value
    }

    /// Text up to an unescaped `delimiter`, with `\delimiter` unescaped and
    /// `\n` a newline; other escapes are kept for the regex or replacement.
    pub(super) fn delimited(&mut self, delimiter: char, command: char) -> Result<String, ScriptError> {
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

    pub(super) fn regex(&self, pattern: &str, fold: bool) -> Result<Option<Box<Regex>>, ScriptError> {
        if pattern.is_empty() {
            // The empty regex: the last one used, at run time.
            return Ok(None);
        }
        match Regex::new(pattern, self.syntax, fold) {
            Ok(regex) => Ok(Some(Box::new(regex.sharing(&self.budget)))),
            Err(error) => fail(self.at, error.message),
        }
    }

    pub(super) fn address(&mut self) -> Result<Option<Address>, ScriptError> {
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

    pub(super) fn selector(&mut self) -> Result<Selector, ScriptError> {
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
    pub(super) fn rest_of_line(&mut self) -> String {
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
    pub(super) fn text_argument(&mut self) -> String {
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

    pub(super) fn end_of_command(&mut self) -> Result<(), ScriptError> {
        self.skip_blanks();
        match self.peek() {
            None | Some('\n' | ';' | '}' | '#') => Ok(()),
            Some(_) => fail(self.at + 1, "extra characters after command"),
        }
    }

    pub(super) fn replacement(&self, text: &str, groups: Option<usize>) -> Result<Vec<Piece>, ScriptError> {
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

    pub(super) fn substitution(&mut self) -> Result<Action, ScriptError> {
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

    pub(super) fn transliteration(&mut self) -> Result<Action, ScriptError> {
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

    pub(super) fn script(&mut self) -> Result<Vec<Instruction>, ScriptError> {
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
