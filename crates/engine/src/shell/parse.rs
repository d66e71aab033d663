//! Parsing a command line the way bash does: quoting (`'...'`, `"..."`,
//! `$'...'`, backslash), parameter expansion (`$NAME`, `${NAME}`,
//! `${NAME:-word}`, `${#NAME}`, `${NAME%pattern}`, ...), command
//! substitution (`$(...)`, backticks), arithmetic (`$((...))`, `((...))`),
//! redirections, pipelines, lists (`;`, `&`, `&&`, `||`, newlines) and the
//! compound commands (`{ }`, `( )`, `if`, `for`, `while`, `until`, `case`,
//! `[[ ]]`, functions).
//!
//! Expansion is deferred: a word keeps its parts so that each command
//! expands with the state the commands before it left. Brace expansion
//! works on the word's unquoted text at expansion time.
//!
//! The parser recurses once per level of nesting; the depth is bounded
//! ([`MAX_SHELL_DEPTH`]) so that no line can exhaust the stack.

use crate::limits::MAX_SHELL_DEPTH;

/// One piece of a word.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Part {
    /// Text taken literally; `quoted` when it came from quotes or a
    /// backslash, so braces, globs and word splitting leave it alone.
    Literal { text: String, quoted: bool },
    /// `$NAME`, `${NAME}` or `${NAME<op>}`; `quoted` is true inside double
    /// quotes, where the value is not split into words.
    Parameter { name: String, quoted: bool, op: Option<Box<ParamOp>> },
    /// `$(list)` or `` `list` ``.
    Command { list: List, quoted: bool },
    /// `$((expression))`: the expression is itself expanded first.
    Arithmetic { expression: Word, quoted: bool },
    /// `<(list)`: the name of a file that holds the list's output.
    Process { list: List },
}

/// What `${NAME...}` does with the value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ParamOp {
    /// `${#NAME}`
    Length,
    /// `${NAME-word}` / `${NAME:-word}`
    Default { colon: bool, word: Word },
    /// `${NAME=word}` / `${NAME:=word}`
    Assign { colon: bool, word: Word },
    /// `${NAME+word}` / `${NAME:+word}`
    Alternative { colon: bool, word: Word },
    /// `${NAME?word}` / `${NAME:?word}`
    Error { colon: bool, word: Word },
    /// `${NAME#pattern}` (shortest) / `${NAME##pattern}` (longest)
    TrimPrefix { longest: bool, pattern: Word },
    /// `${NAME%pattern}` / `${NAME%%pattern}`
    TrimSuffix { longest: bool, pattern: Word },
    /// `${NAME/pattern/string}` / `${NAME//pattern/string}`
    Replace { all: bool, pattern: Word, replacement: Word },
}

/// A word: its parts, and whether any of it was quoted (a quoted empty
/// string is still a word: `echo ""`).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Word {
    pub parts: Vec<Part>,
    pub quoted: bool,
}

impl Word {
    /// The word's text when it is plain unquoted text (reserved words,
    /// names), else None.
    pub fn plain(&self) -> Option<&str> {
        match self.parts.as_slice() {
            [Part::Literal { text, quoted: false }] if !self.quoted => Some(text),
            _ => None,
        }
    }

    fn literal(text: &str) -> Word {
        Word { parts: vec![Part::Literal { text: text.to_string(), quoted: false }], quoted: false }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Connector {
    /// `;`, a newline or the end of the line: run the next pipeline regardless.
    Always,
    /// `&&`: run the next pipeline if this one succeeded.
    IfSuccess,
    /// `||`: run the next pipeline if this one failed.
    IfFailure,
    /// `&`: this pipeline runs in the background; the next one runs at once.
    Background,
}

/// How a redirection opens its target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RedirectKind {
    /// `[n]<file`
    Input,
    /// `[n]>file` and `[n]>|file`
    Output,
    /// `[n]>>file`
    Append,
    /// `[n]>&m`, `[n]<&m`: n becomes a copy of m (`-` closes n).
    Duplicate,
    /// `&>file`: standard output and error to one file.
    Both,
    /// `&>>file`
    BothAppend,
    /// `<<<word`: the word and a newline as standard input.
    HereString,
    /// `<<DELIM` and `<<-DELIM`: the lines up to DELIM as standard input
    /// (expanded as in double quotes unless DELIM was quoted).
    HereDocument,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Redirect {
    pub fd: u32,
    pub kind: RedirectKind,
    pub target: Word,
}

/// One element of `[[ ... ]]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CondItem {
    Word(Word),
    And,
    Or,
    Not,
    Open,
    Close,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Compound {
    /// `{ list; }`
    Group(List),
    /// `( list )`: runs in a copy of the shell.
    Subshell(List),
    If {
        branches: Vec<(List, List)>,
        otherwise: Option<List>,
    },
    For {
        name: String,
        items: Option<Vec<Word>>,
        body: List,
    },
    /// `for ((init; test; step))`
    ArithFor {
        init: Word,
        test: Word,
        step: Word,
        body: List,
    },
    While {
        condition: List,
        body: List,
        until: bool,
    },
    Case {
        subject: Word,
        arms: Vec<(Vec<Word>, List)>,
    },
    /// `[[ expression ]]`
    Cond(Vec<CondItem>),
    /// `(( expression ))`
    Arith(Word),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    /// Words (assignments first, then the command and its arguments) and
    /// redirections.
    Simple {
        words: Vec<Word>,
        redirects: Vec<Redirect>,
    },
    Compound {
        body: Compound,
        redirects: Vec<Redirect>,
    },
    /// `name() { ...; }`: the body's source, parsed again when called (a
    /// shell keeps its functions as text, so its state stays plain data).
    Function {
        name: String,
        body: String,
    },
}

/// `cmd | cmd | ...`, possibly negated with `!` and timed with `time`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pipeline {
    pub commands: Vec<Command>,
    pub negated: bool,
    pub timed: Option<TimeFormat>,
    /// The pipeline as typed, for `jobs`.
    pub text: String,
}

/// How `time` reports: `TIMEFORMAT` (bash's format when unset), or
/// POSIX's with `time -p`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeFormat {
    Shell,
    Posix,
}

/// A parsed line: pipelines, each followed by how the next one is chained.
pub type List = Vec<(Pipeline, Connector)>;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SyntaxError {
    /// `syntax error near unexpected token `X'`
    UnexpectedToken(String),
    /// A quote or bracket was opened and never closed.
    UnterminatedQuote(char),
    /// The line ended inside a compound command or after `|`, `&&`, `||`.
    UnexpectedEof,
    /// Nested deeper than [`MAX_SHELL_DEPTH`].
    TooDeep,
}

impl SyntaxError {
    /// The message bash prints, without the `-bash: ` prefix.
    pub fn message(&self) -> String {
        match self {
            SyntaxError::UnexpectedToken(token) => format!("syntax error near unexpected token `{token}'"),
            SyntaxError::UnterminatedQuote(quote) => format!("unexpected EOF while looking for matching `{quote}'"),
            SyntaxError::UnexpectedEof => "syntax error: unexpected end of file".to_string(),
            SyntaxError::TooDeep => {
                format!("syntax error: nested too deeply (this simulated shell nests compound commands and substitutions at most {MAX_SHELL_DEPTH} deep)")
            }
        }
    }
}

/// Reads a whole line.
pub fn parse(line: &str) -> Result<List, SyntaxError> {
    let mut parser = Parser::new(line, 0);
    let list = parser.list(&[])?;
    match parser.next()? {
        Token::Eof => Ok(list),
        token => Err(parser.unexpected(token)),
    }
}

/// Whether `line` is a command bash would wait for more lines of (an open
/// quote or compound command, a trailing `|`, `&&` or backslash).
pub fn is_incomplete(line: &str) -> bool {
    matches!(parse(line), Err(SyntaxError::UnexpectedEof | SyntaxError::UnterminatedQuote(_))) || line.ends_with('\\')
}

/// Moves pending literal text into the word as one part.
fn flush(word: &mut Word, literal: &mut String, quoted: bool) {
    if !literal.is_empty() {
        word.parts.push(Part::Literal { text: std::mem::take(literal), quoted });
    }
}

/// Characters that end an unquoted word.
fn is_meta(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '|' | '&' | ';' | '(' | ')' | '<' | '>')
}

pub fn is_name(text: &str) -> bool {
    let mut chars = text.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_') && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

const RESERVED: &[&str] =
    &["if", "then", "elif", "else", "fi", "for", "in", "do", "done", "while", "until", "case", "esac", "{", "}", "!", "[[", "]]", "function"];

#[derive(Clone, Debug, PartialEq)]
enum Token {
    Word(Word),
    /// `|`, `||`, `|&`, `&`, `&&`, `;`, `;;`, `(`, `)`
    Op(&'static str),
    Redirect(Option<u32>, &'static str),
    Newline,
    Eof,
}

struct Parser {
    chars: Vec<char>,
    at: usize,
    depth: usize,
    /// A token read ahead, and where it started.
    peeked: Option<(Token, usize)>,
    /// Inside `[[ ]]`: `<` and `>` are words, not redirections.
    in_cond: bool,
}

impl Parser {
    fn new(text: &str, depth: usize) -> Parser {
        Parser { chars: text.chars().collect(), at: 0, depth, peeked: None, in_cond: false }
    }

    fn enter(&mut self) -> Result<(), SyntaxError> {
        self.depth += 1;
        if self.depth > MAX_SHELL_DEPTH {
            return Err(SyntaxError::TooDeep);
        }
        Ok(())
    }

    fn leave(&mut self) {
        self.depth -= 1;
    }

    fn unexpected(&self, token: Token) -> SyntaxError {
        match token {
            Token::Eof => SyntaxError::UnexpectedEof,
            Token::Newline => SyntaxError::UnexpectedToken("newline".into()),
            Token::Op(op) | Token::Redirect(_, op) => SyntaxError::UnexpectedToken(op.into()),
            Token::Word(word) => SyntaxError::UnexpectedToken(word.plain().unwrap_or("word").into()),
        }
    }

    // ---- tokens ----

    fn peek(&mut self) -> Result<&Token, SyntaxError> {
        if self.peeked.is_none() {
            let start = self.skip_blanks();
            let token = self.lex()?;
            self.peeked = Some((token, start));
        }
        Ok(&self.peeked.as_ref().expect("just set").0)
    }

    fn next(&mut self) -> Result<Token, SyntaxError> {
        self.peek()?;
        Ok(self.peeked.take().expect("peeked").0)
    }

    /// Whether the next token is the unquoted word `word`.
    fn peek_is(&mut self, word: &str) -> Result<bool, SyntaxError> {
        Ok(matches!(self.peek()?, Token::Word(w) if w.plain() == Some(word)))
    }

    fn expect_word(&mut self, word: &str) -> Result<(), SyntaxError> {
        match self.next()? {
            Token::Word(w) if w.plain() == Some(word) => Ok(()),
            token => Err(self.unexpected(token)),
        }
    }

    fn expect_op(&mut self, op: &str) -> Result<(), SyntaxError> {
        match self.next()? {
            Token::Op(found) if found == op => Ok(()),
            token => Err(self.unexpected(token)),
        }
    }

    fn skip_newlines(&mut self) -> Result<(), SyntaxError> {
        while *self.peek()? == Token::Newline {
            self.next()?;
        }
        Ok(())
    }

    /// Skips blanks, comments and backslash-newlines; where the next token starts.
    fn skip_blanks(&mut self) -> usize {
        loop {
            match self.chars.get(self.at) {
                Some(' ' | '\t') => self.at += 1,
                Some('\\') if self.chars.get(self.at + 1) == Some(&'\n') => self.at += 2,
                Some('#') => {
                    while self.chars.get(self.at).is_some_and(|&c| c != '\n') {
                        self.at += 1;
                    }
                }
                _ => return self.at,
            }
        }
    }

    fn lex(&mut self) -> Result<Token, SyntaxError> {
        let Some(&c) = self.chars.get(self.at) else {
            return Ok(Token::Eof);
        };
        let next = self.chars.get(self.at + 1).copied();
        let third = self.chars.get(self.at + 2).copied();
        let op = |parser: &mut Parser, len: usize, token: Token| {
            parser.at += len;
            Ok(token)
        };
        match c {
            '\n' => op(self, 1, Token::Newline),
            '|' => match next {
                Some('|') => op(self, 2, Token::Op("||")),
                Some('&') => op(self, 2, Token::Op("|&")),
                _ => op(self, 1, Token::Op("|")),
            },
            '&' => match (next, third) {
                (Some('&'), _) => op(self, 2, Token::Op("&&")),
                (Some('>'), Some('>')) if !self.in_cond => op(self, 3, Token::Redirect(None, "&>>")),
                (Some('>'), _) if !self.in_cond => op(self, 2, Token::Redirect(None, "&>")),
                _ => op(self, 1, Token::Op("&")),
            },
            ';' => match next {
                Some(';') => op(self, 2, Token::Op(";;")),
                _ => op(self, 1, Token::Op(";")),
            },
            '(' => op(self, 1, Token::Op("(")),
            ')' => op(self, 1, Token::Op(")")),
            '<' | '>' if self.in_cond => {
                self.at += 1;
                Ok(Token::Word(Word::literal(&c.to_string())))
            }
            '<' if next == Some('(') => {
                // `<(list)`: the word is a file name, the list's output its content.
                let Part::Command { list, .. } = self.command_substitution(false)? else {
                    return Err(SyntaxError::UnterminatedQuote(')'));
                };
                Ok(Token::Word(Word { parts: vec![Part::Process { list }], quoted: true }))
            }
            '<' | '>' => self.redirect(None),
            d if d.is_ascii_digit() => {
                // `2>file`: digits right before `<` or `>` name a descriptor.
                let digits = self.chars[self.at..].iter().take_while(|c| c.is_ascii_digit()).count();
                match self.chars.get(self.at + digits) {
                    Some('<' | '>') if !self.in_cond => {
                        let fd: String = self.chars[self.at..self.at + digits].iter().collect();
                        self.at += digits;
                        // A descriptor past any real limit is bash's "Bad file descriptor" at run time.
                        self.redirect(Some(fd.parse().unwrap_or(u32::MAX)))
                    }
                    _ => self.word().map(Token::Word),
                }
            }
            _ => self.word().map(Token::Word),
        }
    }

    fn redirect(&mut self, fd: Option<u32>) -> Result<Token, SyntaxError> {
        let rest: String = self.chars[self.at..].iter().take(3).collect();
        let op = ["<<<", "<<", "<&", ">>", ">&", ">|", "<", ">"].into_iter().find(|op| rest.starts_with(op)).unwrap_or(">");
        self.at += op.len();
        if op == "<<" && self.chars.get(self.at) == Some(&'-') {
            self.at += 1;
            return Ok(Token::Redirect(fd, "<<-"));
        }
        Ok(Token::Redirect(fd, op))
    }

    // ---- words ----

    fn word(&mut self) -> Result<Word, SyntaxError> {
        let mut word = Word::default();
        let mut literal = String::new();
        let mut literal_quoted = false;
        macro_rules! add_literal {
            ($text:expr, $quoted:expr) => {{
                let quoted: bool = $quoted;
                if quoted != literal_quoted {
                    flush(&mut word, &mut literal, literal_quoted);
                    literal_quoted = quoted;
                }
                literal.push_str($text);
            }};
        }
        while let Some(&c) = self.chars.get(self.at) {
            if is_meta(c) && !(self.in_cond && matches!(c, '<' | '>')) {
                break;
            }
            match c {
                '\'' => {
                    word.quoted = true;
                    let start = self.at + 1;
                    let Some(len) = self.chars[start..].iter().position(|&d| d == '\'') else {
                        return Err(SyntaxError::UnterminatedQuote('\''));
                    };
                    let text: String = self.chars[start..start + len].iter().collect();
                    add_literal!(&text, true);
                    self.at = start + len + 1;
                }
                '"' => {
                    word.quoted = true;
                    self.at += 1;
                    flush(&mut word, &mut literal, literal_quoted);
                    self.double_quoted(&mut word)?;
                }
                '\\' => {
                    match self.chars.get(self.at + 1) {
                        Some('\n') => {}
                        Some(&next) => add_literal!(&next.to_string(), true),
                        None => {}
                    }
                    // A backslash at the very end escapes nothing.
                    self.at = (self.at + 2).min(self.chars.len());
                }
                '$' if self.chars.get(self.at + 1) == Some(&'\'') => {
                    word.quoted = true;
                    self.at += 2;
                    let text = self.ansi_c()?;
                    add_literal!(&text, true);
                }
                '$' | '`' => {
                    if self.expansion(&mut word, &mut literal, literal_quoted, false)? {
                        add_literal!("$", false);
                    }
                }
                _ => {
                    let mut buffer = [0u8; 4];
                    add_literal!(c.encode_utf8(&mut buffer), false);
                    self.at += 1;
                }
            }
        }
        flush(&mut word, &mut literal, literal_quoted);
        Ok(word)
    }

    /// The inside of `"..."`, after the opening quote; consumes the closing one.
    fn double_quoted(&mut self, word: &mut Word) -> Result<(), SyntaxError> {
        let mut literal = String::new();
        loop {
            let Some(&c) = self.chars.get(self.at) else {
                return Err(SyntaxError::UnterminatedQuote('"'));
            };
            match c {
                '"' => {
                    self.at += 1;
                    flush(word, &mut literal, true);
                    return Ok(());
                }
                '\\' if matches!(self.chars.get(self.at + 1), Some('$' | '`' | '"' | '\\' | '\n')) => {
                    if self.chars[self.at + 1] != '\n' {
                        literal.push(self.chars[self.at + 1]);
                    }
                    self.at += 2;
                }
                '$' | '`' => {
                    if self.expansion(word, &mut literal, true, true)? {
                        literal.push('$');
                    }
                }
                _ => {
                    literal.push(c);
                    self.at += 1;
                }
            }
        }
    }

    /// `$'...'` after the `$'`: ANSI-C escapes.
    fn ansi_c(&mut self) -> Result<String, SyntaxError> {
        let mut out = String::new();
        loop {
            let Some(&c) = self.chars.get(self.at) else {
                return Err(SyntaxError::UnterminatedQuote('\''));
            };
            self.at += 1;
            match c {
                '\'' => return Ok(out),
                '\\' => {
                    let Some(&e) = self.chars.get(self.at) else { continue };
                    self.at += 1;
                    match e {
                        'n' => out.push('\n'),
                        't' => out.push('\t'),
                        'r' => out.push('\r'),
                        'a' => out.push('\x07'),
                        'b' => out.push('\x08'),
                        'e' | 'E' => out.push('\x1b'),
                        'f' => out.push('\x0c'),
                        'v' => out.push('\x0b'),
                        '\\' | '\'' | '"' | '?' => out.push(e),
                        'x' => {
                            let digits: String = self.chars[self.at..].iter().take(2).take_while(|c| c.is_ascii_hexdigit()).collect();
                            self.at += digits.len();
                            match u32::from_str_radix(&digits, 16).ok().and_then(char::from_u32) {
                                Some(ch) => out.push(ch),
                                None => out.push_str("\\x"),
                            }
                        }
                        '0'..='7' => {
                            let digits: String = self.chars[self.at - 1..].iter().take(3).take_while(|c| ('0'..='7').contains(c)).collect();
                            self.at += digits.len() - 1;
                            if let Some(ch) = u32::from_str_radix(&digits, 8).ok().and_then(char::from_u32) {
                                out.push(ch);
                            }
                        }
                        other => {
                            out.push('\\');
                            out.push(other);
                        }
                    }
                }
                _ => out.push(c),
            }
        }
    }

    /// `` `...` ``: the text up to the closing backquote, parsed as a list.
    fn backquoted(&mut self, quoted: bool) -> Result<Part, SyntaxError> {
        self.at += 1;
        let mut text = String::new();
        loop {
            let Some(&c) = self.chars.get(self.at) else {
                return Err(SyntaxError::UnterminatedQuote('`'));
            };
            self.at += 1;
            match c {
                '`' => break,
                '\\' if matches!(self.chars.get(self.at), Some('`' | '\\' | '$')) => {
                    text.push(self.chars[self.at]);
                    self.at += 1;
                }
                _ => text.push(c),
            }
        }
        let mut inner = Parser::new(&text, self.depth);
        inner.enter()?;
        let list = inner.list(&[])?;
        match inner.next()? {
            Token::Eof => Ok(Part::Command { list, quoted }),
            token => Err(inner.unexpected(token)),
        }
    }

    /// The `$` or backquote expansion at the cursor, added to `word` after
    /// the pending literal (flushed as `literal_quoted`); `quoted` inside
    /// double quotes. True for a lone `$`, which the caller keeps as text.
    fn expansion(&mut self, word: &mut Word, literal: &mut String, literal_quoted: bool, quoted: bool) -> Result<bool, SyntaxError> {
        flush(word, literal, literal_quoted);
        let part = if self.chars.get(self.at) == Some(&'`') { Some(self.backquoted(quoted)?) } else { self.dollar(quoted)? };
        match part {
            Some(part) => {
                word.parts.push(part);
                Ok(false)
            }
            None => Ok(true),
        }
    }

    /// What follows a `$`: None for a lone `$`.
    fn dollar(&mut self, quoted: bool) -> Result<Option<Part>, SyntaxError> {
        let next = self.chars.get(self.at + 1).copied();
        match next {
            Some('(') if self.chars.get(self.at + 2) == Some(&'(') => {
                if let Some(end) = self.arithmetic_end(self.at + 3) {
                    let text: String = self.chars[self.at + 3..end].iter().collect();
                    self.at = end + 2;
                    let expression = self.arithmetic_word(&text)?;
                    return Ok(Some(Part::Arithmetic { expression, quoted }));
                }
                self.command_substitution(quoted).map(Some)
            }
            Some('(') => self.command_substitution(quoted).map(Some),
            Some('{') => {
                self.at += 2;
                self.braced_parameter(quoted).map(Some)
            }
            Some(c) if matches!(c, '?' | '$' | '#' | '@' | '*' | '!' | '-') || c.is_ascii_digit() => {
                self.at += 2;
                Ok(Some(Part::Parameter { name: c.to_string(), quoted, op: None }))
            }
            Some(c) if c.is_ascii_alphabetic() || c == '_' => {
                let len = self.chars[self.at + 1..].iter().take_while(|c| c.is_ascii_alphanumeric() || **c == '_').count();
                let name: String = self.chars[self.at + 1..self.at + 1 + len].iter().collect();
                self.at += 1 + len;
                Ok(Some(Part::Parameter { name, quoted, op: None }))
            }
            Some('"') if !quoted => {
                // `$"..."` is a translatable string: here a plain one; the
                // caller reads the `"` next.
                self.at += 1;
                Ok(Some(Part::Literal { text: String::new(), quoted: true }))
            }
            _ => {
                self.at += 1;
                Ok(None)
            }
        }
    }

    /// Where the `))` that closes `$((` starting at `from` is, counting
    /// parentheses; None when there is none (then it is `$( (...) )`).
    fn arithmetic_end(&self, from: usize) -> Option<usize> {
        let mut depth = 0usize;
        let mut at = from;
        while at < self.chars.len() {
            match self.chars[at] {
                '(' => depth += 1,
                ')' if depth == 0 => return (self.chars.get(at + 1) == Some(&')')).then_some(at),
                ')' => depth -= 1,
                _ => {}
            }
            at += 1;
        }
        None
    }

    /// An arithmetic expression's text as a word: `$` expansions, quotes
    /// removed, nothing split.
    fn arithmetic_word(&mut self, text: &str) -> Result<Word, SyntaxError> {
        let mut inner = Parser::new(text, self.depth);
        inner.enter()?;
        let mut word = Word { parts: Vec::new(), quoted: true };
        let mut literal = String::new();
        while let Some(&c) = inner.chars.get(inner.at) {
            match c {
                '$' | '`' => {
                    if inner.expansion(&mut word, &mut literal, true, true)? {
                        literal.push('$');
                    }
                }
                '"' | '\'' => inner.at += 1,
                _ => {
                    literal.push(c);
                    inner.at += 1;
                }
            }
        }
        flush(&mut word, &mut literal, true);
        Ok(word)
    }

    /// `$(list)`, with `self.at` on the `$`.
    fn command_substitution(&mut self, quoted: bool) -> Result<Part, SyntaxError> {
        self.at += 2;
        self.enter()?;
        let saved = (self.peeked.take(), self.in_cond);
        self.in_cond = false;
        let list = self.list(&[])?;
        let closed = matches!(self.next()?, Token::Op(")"));
        self.peeked = saved.0;
        self.in_cond = saved.1;
        self.leave();
        if !closed {
            return Err(SyntaxError::UnterminatedQuote(')'));
        }
        Ok(Part::Command { list, quoted })
    }

    /// `${...}` after the `${`.
    fn braced_parameter(&mut self, quoted: bool) -> Result<Part, SyntaxError> {
        self.enter()?;
        let result = self.braced_parameter_inner(quoted);
        self.leave();
        result
    }

    fn braced_parameter_inner(&mut self, quoted: bool) -> Result<Part, SyntaxError> {
        let length = self.chars.get(self.at) == Some(&'#') && self.chars.get(self.at + 1).is_some_and(|c| *c != '}');
        if length {
            self.at += 1;
        }
        let name_len = match self.chars.get(self.at) {
            Some(c) if matches!(c, '?' | '$' | '#' | '@' | '*' | '!' | '-') || c.is_ascii_digit() => 1,
            _ => self.chars[self.at..].iter().take_while(|c| c.is_ascii_alphanumeric() || **c == '_').count(),
        };
        let name: String = self.chars[self.at..self.at + name_len].iter().collect();
        self.at += name_len;
        let bad = |parser: &mut Parser| {
            // bash: `${x!}: bad substitution` at run time; here the line is refused.
            while parser.chars.get(parser.at).is_some_and(|c| *c != '}') {
                parser.at += 1;
            }
            if parser.chars.get(parser.at).is_none() {
                return Err(SyntaxError::UnterminatedQuote('}'));
            }
            Err(SyntaxError::UnexpectedToken("${".into()))
        };
        if name.is_empty() {
            return bad(self);
        }
        let Some(&c) = self.chars.get(self.at) else {
            return Err(SyntaxError::UnterminatedQuote('}'));
        };
        if c == '}' {
            self.at += 1;
            let op = length.then(|| Box::new(ParamOp::Length));
            return Ok(Part::Parameter { name, quoted, op });
        }
        if length {
            return bad(self);
        }
        let colon = c == ':';
        if colon {
            self.at += 1;
        }
        let Some(&op) = self.chars.get(self.at) else {
            return Err(SyntaxError::UnterminatedQuote('}'));
        };
        self.at += 1;
        let op = match op {
            '-' | '=' | '+' | '?' => {
                let word = self.operand_word(&['}'])?;
                match op {
                    '-' => ParamOp::Default { colon, word },
                    '=' => ParamOp::Assign { colon, word },
                    '+' => ParamOp::Alternative { colon, word },
                    _ => ParamOp::Error { colon, word },
                }
            }
            '#' | '%' if !colon => {
                let longest = self.chars.get(self.at) == Some(&op);
                if longest {
                    self.at += 1;
                }
                let pattern = self.operand_word(&['}'])?;
                if op == '#' {
                    ParamOp::TrimPrefix { longest, pattern }
                } else {
                    ParamOp::TrimSuffix { longest, pattern }
                }
            }
            '/' if !colon => {
                let all = self.chars.get(self.at) == Some(&'/');
                if all {
                    self.at += 1;
                }
                let pattern = self.operand_word(&['/', '}'])?;
                let replacement = if self.chars.get(self.at - 1) == Some(&'/') { self.operand_word(&['}'])? } else { Word::default() };
                ParamOp::Replace { all, pattern, replacement }
            }
            _ => {
                self.at -= 1;
                return bad(self);
            }
        };
        Ok(Part::Parameter { name, quoted, op: Some(Box::new(op)) })
    }

    /// The word inside `${NAME<op>word}` up to one of `ends` (consumed).
    fn operand_word(&mut self, ends: &[char]) -> Result<Word, SyntaxError> {
        let mut word = Word::default();
        let mut literal = String::new();
        loop {
            let Some(&c) = self.chars.get(self.at) else {
                return Err(SyntaxError::UnterminatedQuote('}'));
            };
            if ends.contains(&c) {
                self.at += 1;
                flush(&mut word, &mut literal, false);
                return Ok(word);
            }
            match c {
                '"' => {
                    self.at += 1;
                    flush(&mut word, &mut literal, false);
                    word.quoted = true;
                    self.double_quoted(&mut word)?;
                }
                '\'' => {
                    let start = self.at + 1;
                    let Some(len) = self.chars[start..].iter().position(|&d| d == '\'') else {
                        return Err(SyntaxError::UnterminatedQuote('\''));
                    };
                    flush(&mut word, &mut literal, false);
                    word.quoted = true;
                    word.parts.push(Part::Literal { text: self.chars[start..start + len].iter().collect(), quoted: true });
                    self.at = start + len + 1;
                }
                '\\' => {
                    flush(&mut word, &mut literal, false);
                    if let Some(&next) = self.chars.get(self.at + 1) {
                        word.parts.push(Part::Literal { text: next.to_string(), quoted: true });
                    }
                    self.at = (self.at + 2).min(self.chars.len());
                }
                '$' | '`' => {
                    if self.expansion(&mut word, &mut literal, false, false)? {
                        literal.push('$');
                    }
                }
                _ => {
                    literal.push(c);
                    self.at += 1;
                }
            }
        }
    }

    // ---- grammar ----

    /// A list up to the end, `)`, `;;`, or one of the reserved words
    /// `until` (none of which is consumed).
    fn list(&mut self, until: &[&str]) -> Result<List, SyntaxError> {
        let mut list = List::new();
        loop {
            self.skip_newlines()?;
            if self.at_list_end(until)? {
                return Ok(list);
            }
            let pipeline = self.pipeline()?;
            let connector = match self.peek()? {
                Token::Op(";") | Token::Newline => {
                    self.next()?;
                    Connector::Always
                }
                Token::Op("&") => {
                    self.next()?;
                    Connector::Background
                }
                Token::Op("&&") | Token::Op("||") => {
                    let connector = if self.next()? == Token::Op("&&") { Connector::IfSuccess } else { Connector::IfFailure };
                    self.skip_newlines()?;
                    if self.at_list_end(until)? {
                        let token = self.next()?;
                        return Err(self.unexpected(token));
                    }
                    connector
                }
                _ => {
                    list.push((pipeline, Connector::Always));
                    return Ok(list);
                }
            };
            list.push((pipeline, connector));
        }
    }

    fn at_list_end(&mut self, until: &[&str]) -> Result<bool, SyntaxError> {
        Ok(match self.peek()? {
            Token::Eof | Token::Op(")") | Token::Op(";;") => true,
            Token::Word(word) => word.plain().is_some_and(|text| until.contains(&text)),
            _ => false,
        })
    }

    fn pipeline(&mut self) -> Result<Pipeline, SyntaxError> {
        let start = self.peeked.as_ref().map_or(self.at, |(_, start)| *start);
        let timed = if self.peek_is("time")? {
            self.next()?;
            let posix = self.peek_is("-p")?;
            if posix {
                self.next()?;
            }
            Some(if posix { TimeFormat::Posix } else { TimeFormat::Shell })
        } else {
            None
        };
        let negated = self.peek_is("!")?;
        if negated {
            self.next()?;
        }
        // `time` alone times nothing (bash reports the shell's own times).
        let nothing = matches!(self.peek()?, Token::Eof | Token::Newline | Token::Op(";" | "&" | "&&" | "||" | ")"));
        if timed.is_some() && nothing {
            let text = self.chars[start.min(self.chars.len())..self.at.min(self.chars.len())].iter().collect::<String>().trim().to_string();
            return Ok(Pipeline { commands: vec![Command::Simple { words: Vec::new(), redirects: Vec::new() }], negated, timed, text });
        }
        let mut commands = vec![self.command()?];
        loop {
            match self.peek()? {
                Token::Op("|") => {}
                Token::Op("|&") => {
                    // `a |& b` is `a 2>&1 | b`.
                    if let Some(Command::Simple { redirects, .. } | Command::Compound { redirects, .. }) = commands.last_mut() {
                        redirects.push(Redirect { fd: 2, kind: RedirectKind::Duplicate, target: Word::literal("1") });
                    }
                }
                _ => break,
            }
            self.next()?;
            self.skip_newlines()?;
            commands.push(self.command()?);
        }
        let end = self.peeked.as_ref().map_or(self.at, |(_, start)| *start);
        let end = end.clamp(start, self.chars.len());
        let text = self.chars[start.min(end)..end].iter().collect::<String>().trim().to_string();
        Ok(Pipeline { commands, negated, timed, text })
    }

    fn command(&mut self) -> Result<Command, SyntaxError> {
        let token_start = {
            self.peek()?;
            self.peeked.as_ref().map_or(self.at, |(_, start)| *start)
        };
        let token = self.peek()?.clone();
        let body = match &token {
            Token::Op("(") if self.chars.get(token_start + 1) == Some(&'(') => {
                // `(( expression ))`
                match self.arithmetic_end(token_start + 2) {
                    Some(end) => {
                        self.peeked = None;
                        let text: String = self.chars[token_start + 2..end].iter().collect();
                        self.at = end + 2;
                        Compound::Arith(self.arithmetic_word(&text)?)
                    }
                    None => self.subshell()?,
                }
            }
            Token::Op("(") => self.subshell()?,
            Token::Word(word) => match word.plain() {
                Some("{") => {
                    self.next()?;
                    self.enter()?;
                    let list = self.list(&["}"])?;
                    self.expect_word("}")?;
                    self.leave();
                    Compound::Group(list)
                }
                Some("if") => self.if_command()?,
                Some("for") => self.for_command()?,
                Some(keyword @ ("while" | "until")) => {
                    let until = keyword == "until";
                    self.next()?;
                    self.enter()?;
                    let condition = self.list(&["do"])?;
                    self.expect_word("do")?;
                    let body = self.list(&["done"])?;
                    self.expect_word("done")?;
                    self.leave();
                    Compound::While { condition, body, until }
                }
                Some("case") => self.case_command()?,
                Some("[[") => self.cond_command()?,
                Some("function") => {
                    self.next()?;
                    let name = match self.next()? {
                        Token::Word(word) if word.plain().is_some() => word.plain().unwrap_or_default().to_string(),
                        token => return Err(self.unexpected(token)),
                    };
                    if *self.peek()? == Token::Op("(") {
                        self.next()?;
                        self.expect_op(")")?;
                    }
                    return self.function_body(name);
                }
                Some(reserved) if RESERVED.contains(&reserved) && reserved != "!" => {
                    return Err(SyntaxError::UnexpectedToken(reserved.to_string()));
                }
                _ => return self.simple_command(),
            },
            Token::Redirect(..) => return self.simple_command(),
            _ => {
                let token = self.next()?;
                return Err(self.unexpected(token));
            }
        };
        let redirects = self.redirects()?;
        Ok(Command::Compound { body, redirects })
    }

    fn subshell(&mut self) -> Result<Compound, SyntaxError> {
        self.next()?;
        self.enter()?;
        let list = self.list(&[])?;
        self.expect_op(")")?;
        self.leave();
        Ok(Compound::Subshell(list))
    }

    fn redirects(&mut self) -> Result<Vec<Redirect>, SyntaxError> {
        let mut redirects = Vec::new();
        while let Token::Redirect(..) = self.peek()? {
            redirects.push(self.redirect_operand()?);
        }
        Ok(redirects)
    }

    fn redirect_operand(&mut self) -> Result<Redirect, SyntaxError> {
        let Token::Redirect(fd, op) = self.next()? else { unreachable!("called on a redirection token") };
        let target = match self.next()? {
            Token::Word(word) => word,
            token => return Err(self.unexpected(token)),
        };
        if op == "<<" || op == "<<-" {
            let target = self.here_document(&target, op == "<<-")?;
            return Ok(Redirect { fd: fd.unwrap_or(0), kind: RedirectKind::HereDocument, target });
        }
        let (default_fd, kind) = match op {
            "<" => (0, RedirectKind::Input),
            "<<<" => (0, RedirectKind::HereString),
            "<&" => (0, RedirectKind::Duplicate),
            ">>" => (1, RedirectKind::Append),
            ">&" => (1, RedirectKind::Duplicate),
            "&>" => (1, RedirectKind::Both),
            "&>>" => (1, RedirectKind::BothAppend),
            _ => (1, RedirectKind::Output),
        };
        // `>&file` (a word that is not a descriptor) is `&>file`.
        let kind = match (kind, fd, target.plain()) {
            (RedirectKind::Duplicate, None, Some(text)) if default_fd == 1 && text != "-" && !text.chars().all(|c| c.is_ascii_digit()) => RedirectKind::Both,
            _ => kind,
        };
        Ok(Redirect { fd: fd.unwrap_or(default_fd), kind, target })
    }

    /// A here-document's body: the lines after the one being read, up to
    /// the delimiter's line, taken out of the text so that parsing goes on
    /// after them (a second here-document on the line reads the lines that
    /// follow the first's). Without its delimiter yet, the command is
    /// incomplete and waits for more lines, as bash's `> ` prompt does.
    fn here_document(&mut self, delimiter: &Word, strip_tabs: bool) -> Result<Word, SyntaxError> {
        let quoted = delimiter.quoted || delimiter.parts.iter().any(|part| matches!(part, Part::Literal { quoted: true, .. }));
        let name: String = delimiter
            .parts
            .iter()
            .map(|part| match part {
                Part::Literal { text, .. } => text.clone(),
                _ => String::new(),
            })
            .collect();
        let Some(line_end) = self.chars[self.at..].iter().position(|c| *c == '\n').map(|p| p + self.at) else {
            return Err(SyntaxError::UnexpectedEof);
        };
        let mut body = String::new();
        let mut at = line_end + 1;
        loop {
            if at > self.chars.len() {
                return Err(SyntaxError::UnexpectedEof);
            }
            let end = self.chars[at..].iter().position(|c| *c == '\n').map_or(self.chars.len(), |p| p + at);
            let mut line: String = self.chars[at..end].iter().collect();
            if strip_tabs {
                line = line.trim_start_matches('\t').to_string();
            }
            if line == name {
                self.chars.drain(line_end + 1..(end + 1).min(self.chars.len()));
                break;
            }
            if end == self.chars.len() {
                return Err(SyntaxError::UnexpectedEof);
            }
            body.push_str(&line);
            body.push('\n');
            at = end + 1;
        }
        if quoted {
            return Ok(Word { parts: vec![Part::Literal { text: body, quoted: true }], quoted: true });
        }
        // Expanded as inside double quotes, except that a `"` is just a
        // character (and so is a backslash before it).
        let mut escaped = String::with_capacity(body.len() + 2);
        let mut chars = body.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '"' => escaped.push_str("\\\""),
                '\\' if chars.peek() == Some(&'"') => escaped.push_str("\\\\"),
                c => escaped.push(c),
            }
        }
        let text = format!("\"{escaped}\"");
        let mut inner = Parser::new(&text, self.depth);
        inner.word()
    }

    fn simple_command(&mut self) -> Result<Command, SyntaxError> {
        let mut words = Vec::new();
        let mut redirects = Vec::new();
        loop {
            match self.peek()? {
                Token::Word(_) => {
                    let Token::Word(word) = self.next()? else { unreachable!() };
                    words.push(word);
                }
                Token::Redirect(..) => redirects.push(self.redirect_operand()?),
                Token::Op("(") if words.len() == 1 && redirects.is_empty() => {
                    // `name() body`
                    let name = match words[0].plain() {
                        Some(name) if !RESERVED.contains(&name) => name.to_string(),
                        _ => return Err(SyntaxError::UnexpectedToken("(".into())),
                    };
                    self.next()?;
                    self.expect_op(")")?;
                    return self.function_body(name);
                }
                _ => break,
            }
        }
        Ok(Command::Simple { words, redirects })
    }

    /// A function's body: a compound command, kept as its source text.
    fn function_body(&mut self, name: String) -> Result<Command, SyntaxError> {
        self.skip_newlines()?;
        let start = {
            self.peek()?;
            self.peeked.as_ref().map_or(self.at, |(_, start)| *start)
        };
        let body = self.command()?;
        if !matches!(body, Command::Compound { .. }) {
            let token = self.next()?;
            return Err(self.unexpected(token));
        }
        let end = self.peeked.as_ref().map_or(self.at, |(_, start)| *start);
        Ok(Command::Function { name, body: self.chars[start..end].iter().collect::<String>().trim_end().to_string() })
    }

    fn if_command(&mut self) -> Result<Compound, SyntaxError> {
        self.next()?;
        self.enter()?;
        let mut branches = Vec::new();
        let mut otherwise = None;
        loop {
            let condition = self.list(&["then"])?;
            self.expect_word("then")?;
            let body = self.list(&["elif", "else", "fi"])?;
            branches.push((condition, body));
            match self.next()? {
                Token::Word(w) if w.plain() == Some("elif") => continue,
                Token::Word(w) if w.plain() == Some("else") => {
                    otherwise = Some(self.list(&["fi"])?);
                    self.expect_word("fi")?;
                    break;
                }
                Token::Word(w) if w.plain() == Some("fi") => break,
                token => return Err(self.unexpected(token)),
            }
        }
        self.leave();
        Ok(Compound::If { branches, otherwise })
    }

    fn for_command(&mut self) -> Result<Compound, SyntaxError> {
        self.next()?;
        self.enter()?;
        let start = self.skip_blanks();
        if self.peeked.is_none() && self.chars.get(start) == Some(&'(') && self.chars.get(start + 1) == Some(&'(') {
            // `for ((init; test; step))`
            let Some(end) = self.arithmetic_end(start + 2) else {
                return Err(SyntaxError::UnterminatedQuote(')'));
            };
            let text: String = self.chars[start + 2..end].iter().collect();
            self.at = end + 2;
            let pieces: Vec<&str> = text.split(';').collect();
            let [init, test, step] = pieces[..] else {
                return Err(SyntaxError::UnexpectedToken("((".into()));
            };
            let (init, test, step) = (self.arithmetic_word(init)?, self.arithmetic_word(test)?, self.arithmetic_word(step)?);
            if *self.peek()? == Token::Op(";") {
                self.next()?;
            }
            self.skip_newlines()?;
            let body = self.loop_body()?;
            self.leave();
            return Ok(Compound::ArithFor { init, test, step, body });
        }
        let name = match self.next()? {
            Token::Word(word) if word.plain().is_some_and(is_name) => word.plain().unwrap_or_default().to_string(),
            token => return Err(self.unexpected(token)),
        };
        let mut items = None;
        if *self.peek()? == Token::Newline {
            self.skip_newlines()?;
        }
        if self.peek_is("in")? {
            self.next()?;
            let mut words = Vec::new();
            while let Token::Word(_) = self.peek()? {
                let Token::Word(word) = self.next()? else { unreachable!() };
                words.push(word);
            }
            items = Some(words);
        }
        match self.peek()? {
            Token::Op(";") | Token::Newline => {
                self.next()?;
            }
            _ => {}
        }
        self.skip_newlines()?;
        let body = self.loop_body()?;
        self.leave();
        Ok(Compound::For { name, items, body })
    }

    /// `do list done`
    fn loop_body(&mut self) -> Result<List, SyntaxError> {
        self.expect_word("do")?;
        let body = self.list(&["done"])?;
        self.expect_word("done")?;
        Ok(body)
    }

    fn case_command(&mut self) -> Result<Compound, SyntaxError> {
        self.next()?;
        self.enter()?;
        let subject = match self.next()? {
            Token::Word(word) => word,
            token => return Err(self.unexpected(token)),
        };
        self.skip_newlines()?;
        self.expect_word("in")?;
        let mut arms = Vec::new();
        loop {
            self.skip_newlines()?;
            if self.peek_is("esac")? {
                self.next()?;
                break;
            }
            if *self.peek()? == Token::Op("(") {
                self.next()?;
            }
            let mut patterns = Vec::new();
            loop {
                match self.next()? {
                    Token::Word(word) => patterns.push(word),
                    token => return Err(self.unexpected(token)),
                }
                match self.next()? {
                    Token::Op("|") => continue,
                    Token::Op(")") => break,
                    token => return Err(self.unexpected(token)),
                }
            }
            let body = self.list(&["esac"])?;
            arms.push((patterns, body));
            match self.peek()? {
                Token::Op(";;") => {
                    self.next()?;
                }
                Token::Word(w) if w.plain() == Some("esac") => {}
                _ => {
                    let token = self.next()?;
                    return Err(self.unexpected(token));
                }
            }
        }
        self.leave();
        Ok(Compound::Case { subject, arms })
    }

    fn cond_command(&mut self) -> Result<Compound, SyntaxError> {
        self.next()?;
        self.in_cond = true;
        let mut items = Vec::new();
        let result = loop {
            let token = match self.next() {
                Ok(token) => token,
                Err(error) => break Err(error),
            };
            match token {
                Token::Word(word) if word.plain() == Some("]]") => break Ok(()),
                Token::Word(word) if word.plain() == Some("!") => items.push(CondItem::Not),
                Token::Word(word) => items.push(CondItem::Word(word)),
                Token::Op("&&") => items.push(CondItem::And),
                Token::Op("||") => items.push(CondItem::Or),
                Token::Op("(") => items.push(CondItem::Open),
                Token::Op(")") => items.push(CondItem::Close),
                token => break Err(self.unexpected(token)),
            }
        };
        self.in_cond = false;
        result?;
        Ok(Compound::Cond(items))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lit(text: &str) -> Word {
        Word::literal(text)
    }

    fn simple(list: &List, at: usize) -> &Vec<Word> {
        match &list[at].0.commands[0] {
            Command::Simple { words, .. } => words,
            other => panic!("not simple: {other:?}"),
        }
    }

    #[test]
    fn splits_words_and_operators() {
        let list = parse("nvidia-smi -L | wc -l && echo ok; false || echo no").unwrap();
        assert_eq!(list.len(), 4);
        assert_eq!(list[0].0.commands.len(), 2);
        assert_eq!(simple(&list, 0), &vec![lit("nvidia-smi"), lit("-L")]);
        assert_eq!(list[0].0.text, "nvidia-smi -L | wc -l");
        assert_eq!(list[0].1, Connector::IfSuccess);
        assert_eq!(list[1].1, Connector::Always);
        assert_eq!(list[2].1, Connector::IfFailure);
        assert_eq!(list[3].1, Connector::Always);
    }

    #[test]
    fn quotes_join_and_protect() {
        let list = parse(r#"echo 'a  b'"c d"\ e"#).unwrap();
        let word = &simple(&list, 0)[1];
        let text: String = word
            .parts
            .iter()
            .map(|p| match p {
                Part::Literal { text, .. } => text.as_str(),
                _ => "?",
            })
            .collect();
        assert_eq!(text, "a  bc d e");
        assert!(word.quoted);
        let list = parse(r#"echo "" '' x#y # comment"#).unwrap();
        assert_eq!(simple(&list, 0).len(), 4);
    }

    #[test]
    fn parameters_are_kept_for_later_expansion() {
        let list = parse(r#"echo $HOME "${USER}x" '$NOT' $? $"#).unwrap();
        let words = simple(&list, 0);
        assert_eq!(words[1].parts, vec![Part::Parameter { name: "HOME".into(), quoted: false, op: None }]);
        assert_eq!(words[2].parts, vec![Part::Parameter { name: "USER".into(), quoted: true, op: None }, Part::Literal { text: "x".into(), quoted: true }]);
        assert_eq!(words[3].parts, vec![Part::Literal { text: "$NOT".into(), quoted: true }]);
        assert_eq!(words[4].parts, vec![Part::Parameter { name: "?".into(), quoted: false, op: None }]);
        assert_eq!(words[5].parts, vec![Part::Literal { text: "$".into(), quoted: false }]);
    }

    #[test]
    fn compound_commands_parse() {
        for line in [
            "for n in gpu-001 gpu-002; do ssh $n hostname; done",
            "for n in a b\ndo\n echo $n\ndone",
            "if true; then echo a; elif false; then echo b; else echo c; fi",
            "while false; do :; done; until true; do :; done",
            "case $x in a|b) echo ab;; *) echo other;; esac",
            "f() { echo $1; }; function g { f x; }",
            "[[ -n $x && ( $y == a* || ! -z $z ) ]]",
            "(( i += 2 )); for ((i=0; i<3; i++)); do echo $i; done",
            "{ echo a; echo b; } > /dev/null 2>&1",
            "( cd /tmp; pwd ) | cat",
            "echo $(hostname) `date` $((1 + 2)) ${HOME:-/}",
            "echo x |& cat",
            "! false",
        ] {
            assert!(parse(line).is_ok(), "{line}: {:?}", parse(line));
        }
    }

    #[test]
    fn redirections_name_their_descriptor() {
        let list = parse("cmd 2>&1 >out 2>/dev/null >>log <in &>both <<<word").unwrap();
        let Command::Simple { words, redirects } = &list[0].0.commands[0] else { panic!() };
        assert_eq!(words.len(), 1);
        let kinds: Vec<(u32, RedirectKind)> = redirects.iter().map(|r| (r.fd, r.kind)).collect();
        use RedirectKind::*;
        assert_eq!(kinds, [(2, Duplicate), (1, Output), (2, Output), (1, Append), (0, Input), (1, Both), (0, HereString)]);
        // A number not next to `>` is a word.
        assert_eq!(simple(&parse("echo 2 > x").unwrap(), 0).len(), 2);
    }

    #[test]
    fn syntax_errors_read_like_bash() {
        assert_eq!(parse("| wc").unwrap_err().message(), "syntax error near unexpected token `|'");
        assert_eq!(parse("a &&").unwrap_err(), SyntaxError::UnexpectedEof);
        assert_eq!(parse("a |").unwrap_err(), SyntaxError::UnexpectedEof);
        assert_eq!(parse("echo 'x").unwrap_err().message(), "unexpected EOF while looking for matching `''");
        assert_eq!(parse("a ; ; b").unwrap_err(), SyntaxError::UnexpectedToken(";".into()));
        assert_eq!(parse("& a").unwrap_err().message(), "syntax error near unexpected token `&'");
        assert_eq!(parse("a & b &").unwrap().iter().map(|(_, c)| *c).collect::<Vec<_>>(), [Connector::Background, Connector::Background]);
        assert_eq!(parse("done").unwrap_err().message(), "syntax error near unexpected token `done'");
        assert_eq!(parse("if true; then echo; fi fi").unwrap_err().message(), "syntax error near unexpected token `fi'");
        assert_eq!(parse("echo )").unwrap_err().message(), "syntax error near unexpected token `)'");
        assert_eq!(parse("for x in a; do").unwrap_err(), SyntaxError::UnexpectedEof);
        assert_eq!(parse("echo ${x").unwrap_err().message(), "unexpected EOF while looking for matching `}'");
        assert_eq!(parse("echo $(echo a").unwrap_err().message(), "unexpected EOF while looking for matching `)'");
        assert!(parse("").unwrap().is_empty());
        assert!(parse("a;").is_ok());
        assert!(is_incomplete("for x in a b; do") && is_incomplete("echo 'a") && !is_incomplete("echo a"));
    }

    #[test]
    fn nesting_is_bounded() {
        let deep = "$(".repeat(10_000) + &")".repeat(10_000);
        assert_eq!(parse(&format!("echo {deep}")).unwrap_err(), SyntaxError::TooDeep);
        let groups = "{ ".repeat(10_000) + "true" + &"; }".repeat(10_000);
        assert_eq!(parse(&groups).unwrap_err(), SyntaxError::TooDeep);
        let backquotes = "echo `echo \\`echo x\\``";
        assert!(parse(backquotes).is_ok());
    }
}
