//! POSIX basic and extended regular expressions, as GNU grep and awk read
//! them, for the patterns operators type.
//!
//! A pattern is parsed to a tree, compiled to a Thompson NFA and run by
//! simulating every thread at once (no backtracking), so matching takes
//! O(text x program) steps and no pattern can hang the page. Matches are
//! leftmost-longest, as POSIX requires. Programs are capped in size: a huge
//! `\{n,m\}` answers "Regular expression too big" as grep does.
//!
//! Supported: literals, `.`, bracket expressions with ranges and
//! `[:classes:]`, `^ $`, `* + ?`, intervals, groups, alternation (`\|` and
//! `\+ \?` in basic syntax, as GNU allows), `\w \W \s \S \b \B \< \>`,
//! case folding, the groups' submatches for sed's `\1`, and back-references
//! in a pattern (`\(ab\)\1`): a pattern with one is matched by a walk over
//! its paths instead (exponential at worst, so bounded by the same budget).
//! Not supported: collating elements.

use std::cell::Cell;
use std::rc::Rc;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Syntax {
    Basic,
    Extended,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    /// The message GNU grep prints after `grep: `.
    pub message: String,
}

fn error<T>(message: &str) -> Result<T, Error> {
    Err(Error { message: message.to_string() })
}

const UNMATCHED_BRACKET: &str = "Unmatched [, [^, [:, [., or [=";
const TOO_BIG: &str = "Regular expression too big";
/// The most instructions a compiled pattern may have.
const MAX_PROGRAM: usize = 20_000;
/// GNU's RE_DUP_MAX.
const MAX_REPEAT: u32 = 32_767;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum NamedClass {
    Alpha,
    Digit,
    Alnum,
    Upper,
    Lower,
    Space,
    Blank,
    Punct,
    Print,
    Graph,
    Cntrl,
    Xdigit,
    /// `\w`: letters, digits and underscore.
    Word,
}

impl NamedClass {
    fn parse(name: &str) -> Option<NamedClass> {
        Some(match name {
            "alpha" => NamedClass::Alpha,
            "digit" => NamedClass::Digit,
            "alnum" => NamedClass::Alnum,
            "upper" => NamedClass::Upper,
            "lower" => NamedClass::Lower,
            "space" => NamedClass::Space,
            "blank" => NamedClass::Blank,
            "punct" => NamedClass::Punct,
            "print" => NamedClass::Print,
            "graph" => NamedClass::Graph,
            "cntrl" => NamedClass::Cntrl,
            "xdigit" => NamedClass::Xdigit,
            _ => return None,
        })
    }

    fn contains(self, c: char) -> bool {
        match self {
            NamedClass::Alpha => c.is_alphabetic(),
            NamedClass::Digit => c.is_ascii_digit(),
            NamedClass::Alnum => c.is_alphanumeric(),
            NamedClass::Upper => c.is_uppercase(),
            NamedClass::Lower => c.is_lowercase(),
            NamedClass::Space => c.is_whitespace(),
            NamedClass::Blank => c == ' ' || c == '\t',
            NamedClass::Punct => c.is_ascii_punctuation(),
            NamedClass::Print => !c.is_control(),
            NamedClass::Graph => !c.is_control() && !c.is_whitespace(),
            NamedClass::Cntrl => c.is_control(),
            NamedClass::Xdigit => c.is_ascii_hexdigit(),
            NamedClass::Word => is_word_char(c),
        }
    }
}

/// A word constituent for `-w`, `\b`, `\<` and `\>`.
pub fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum ClassItem {
    Char(char),
    Range(char, char),
    Named(NamedClass),
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Class {
    negated: bool,
    items: Vec<ClassItem>,
}

impl Class {
    fn matches(&self, c: char, fold: bool) -> bool {
        let candidates = if fold { [c, lower(c), upper(c)] } else { [c, c, c] };
        let hit = self.items.iter().any(|item| {
            candidates.iter().any(|&c| match *item {
                ClassItem::Char(x) => x == c,
                ClassItem::Range(a, b) => a <= c && c <= b,
                ClassItem::Named(class) => class.contains(c),
            })
        });
        hit != self.negated
    }
}

// Case folding is ASCII, as in the C locale: every emulated output is ASCII,
// and Unicode case tables would cost the browser build more than they give.
fn lower(c: char) -> char {
    c.to_ascii_lowercase()
}

fn upper(c: char) -> char {
    c.to_ascii_uppercase()
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Assertion {
    LineStart,
    LineEnd,
    WordBoundary,
    NotWordBoundary,
    WordStart,
    WordEnd,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Ast {
    Empty,
    Literal(char),
    Any,
    Class(Class),
    Assert(Assertion),
    Concat(Vec<Ast>),
    Alternation(Vec<Ast>),
    Repeat(Box<Ast>, u32, Option<u32>),
    /// A parenthesised group: its number (from 1) and what it holds.
    Group(usize, Box<Ast>),
    /// `\N`: the text group N matched.
    Backref(usize),
}

struct Parser<'p> {
    chars: Vec<char>,
    at: usize,
    syntax: Syntax,
    /// Perl-style `\d` (for grep -P, approximated).
    perl: bool,
    warnings: Vec<String>,
    /// Groups opened so far: the next one's number is this plus one.
    groups: usize,
    /// Groups open here: a back-reference may name only a closed one.
    open: Vec<usize>,
    backrefs: bool,
    _pattern: &'p str,
}

impl Parser<'_> {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.at).copied()
    }

    fn peek_at(&self, offset: usize) -> Option<char> {
        self.chars.get(self.at + offset).copied()
    }

    fn extended(&self) -> bool {
        self.syntax == Syntax::Extended
    }

    /// At `|` (extended) or `\|` (basic)?
    fn at_alternation(&self) -> bool {
        if self.extended() {
            self.peek() == Some('|')
        } else {
            self.peek() == Some('\\') && self.peek_at(1) == Some('|')
        }
    }

    /// At the `)` or `\)` that closes a group?
    fn at_group_close(&self, depth: usize) -> bool {
        if depth == 0 {
            return false;
        }
        if self.extended() {
            self.peek() == Some(')')
        } else {
            self.peek() == Some('\\') && self.peek_at(1) == Some(')')
        }
    }

    fn alternation(&mut self, depth: usize) -> Result<Ast, Error> {
        // Groups nest at most MAX_SYNTAX_DEPTH deep: the parser recurses per group.
        if depth > crate::limits::MAX_SYNTAX_DEPTH {
            return error(TOO_BIG);
        }
        let mut branches = vec![self.branch(depth)?];
        while self.at_alternation() {
            self.at += if self.extended() { 1 } else { 2 };
            branches.push(self.branch(depth)?);
        }
        Ok(if branches.len() == 1 { branches.pop().unwrap_or(Ast::Empty) } else { Ast::Alternation(branches) })
    }

    fn branch(&mut self, depth: usize) -> Result<Ast, Error> {
        let mut pieces: Vec<Ast> = Vec::new();
        let branch_start = self.at;
        while self.peek().is_some() && !self.at_alternation() && !self.at_group_close(depth) {
            // Basic syntax: `*` is literal at the start of a branch or right after `^`.
            let at_start = pieces.is_empty() || (pieces.len() == 1 && pieces[0] == Ast::Assert(Assertion::LineStart));
            let atom = self.atom(depth, at_start, self.at == branch_start)?;
            let atom = self.postfix(atom)?;
            pieces.push(atom);
        }
        Ok(match pieces.len() {
            0 => Ast::Empty,
            1 => pieces.pop().unwrap_or(Ast::Empty),
            _ => Ast::Concat(pieces),
        })
    }

    fn atom(&mut self, depth: usize, at_start: bool, first_in_branch: bool) -> Result<Ast, Error> {
        let Some(c) = self.peek() else { return Ok(Ast::Empty) };
        self.at += 1;
        let extended = self.extended();
        Ok(match c {
            '.' => Ast::Any,
            '[' => Ast::Class(self.bracket()?),
            '^' if extended || first_in_branch => Ast::Assert(Assertion::LineStart),
            '$' if extended || self.basic_dollar_is_anchor(depth) => Ast::Assert(Assertion::LineEnd),
            '(' if extended => {
                self.groups += 1;
                let number = self.groups;
                self.open.push(number);
                let inner = self.alternation(depth + 1)?;
                if self.peek() != Some(')') {
                    return error("Unmatched ( or \\(");
                }
                self.at += 1;
                self.open.pop();
                Ast::Group(number, Box::new(inner))
            }
            '*' if at_start && !extended => Ast::Literal('*'),
            '*' | '+' | '?' if at_start && extended => {
                self.warnings.push(format!("{c} at start of expression"));
                Ast::Empty
            }
            '{' if at_start && extended => Ast::Literal('{'),
            '\\' => self.escape(depth, at_start)?,
            c => Ast::Literal(c),
        })
    }

    /// In basic syntax `$` anchors only at the end of a branch.
    fn basic_dollar_is_anchor(&self, depth: usize) -> bool {
        self.peek().is_none() || self.at_alternation() || self.at_group_close(depth)
    }

    fn escape(&mut self, depth: usize, at_start: bool) -> Result<Ast, Error> {
        let Some(c) = self.peek() else { return error("Trailing backslash") };
        self.at += 1;
        let word = Class { negated: false, items: vec![ClassItem::Named(NamedClass::Word)] };
        let space = Class { negated: false, items: vec![ClassItem::Named(NamedClass::Space)] };
        let digit = Class { negated: false, items: vec![ClassItem::Named(NamedClass::Digit)] };
        Ok(match c {
            '(' if !self.extended() => {
                self.groups += 1;
                let number = self.groups;
                self.open.push(number);
                let inner = self.alternation(depth + 1)?;
                if !(self.peek() == Some('\\') && self.peek_at(1) == Some(')')) {
                    return error("Unmatched ( or \\(");
                }
                self.at += 2;
                self.open.pop();
                Ast::Group(number, Box::new(inner))
            }
            '1'..='9' => {
                let number = c as usize - '0' as usize;
                if number > self.groups || self.open.contains(&number) {
                    return error("Invalid back reference");
                }
                self.backrefs = true;
                Ast::Backref(number)
            }
            ')' if !self.extended() => return error("Unmatched ) or \\)"),
            '{' if !self.extended() && at_start => return error("Invalid preceding regular expression"),
            'w' => Ast::Class(word),
            'W' => Ast::Class(Class { negated: true, ..word }),
            's' => Ast::Class(space),
            'S' => Ast::Class(Class { negated: true, ..space }),
            'd' if self.perl => Ast::Class(digit),
            'D' if self.perl => Ast::Class(Class { negated: true, ..digit }),
            'b' => Ast::Assert(Assertion::WordBoundary),
            'B' => Ast::Assert(Assertion::NotWordBoundary),
            '<' => Ast::Assert(Assertion::WordStart),
            '>' => Ast::Assert(Assertion::WordEnd),
            '`' => Ast::Assert(Assertion::LineStart),
            '\'' => Ast::Assert(Assertion::LineEnd),
            't' if self.perl => Ast::Literal('\t'),
            c => Ast::Literal(c),
        })
    }

    fn postfix(&mut self, mut atom: Ast) -> Result<Ast, Error> {
        loop {
            let extended = self.extended();
            let (min, max) = match (self.peek(), self.peek_at(1)) {
                (Some('*'), _) => {
                    self.at += 1;
                    (0, None)
                }
                (Some('+'), _) if extended => {
                    self.at += 1;
                    (1, None)
                }
                (Some('?'), _) if extended => {
                    self.at += 1;
                    (0, Some(1))
                }
                (Some('\\'), Some('+')) if !extended => {
                    self.at += 2;
                    (1, None)
                }
                (Some('\\'), Some('?')) if !extended => {
                    self.at += 2;
                    (0, Some(1))
                }
                (Some('{'), _) if extended => match self.interval(self.at + 1)? {
                    Some((min, max, end)) => {
                        self.at = end;
                        (min, max)
                    }
                    // GNU reads a `{` that starts no valid interval as a literal.
                    None => return Ok(atom),
                },
                (Some('\\'), Some('{')) if !extended => match self.interval(self.at + 2)? {
                    Some((min, max, end)) => {
                        self.at = end;
                        (min, max)
                    }
                    None => return error("Invalid content of \\{\\}"),
                },
                _ => return Ok(atom),
            };
            atom = Ast::Repeat(Box::new(atom), min, max);
        }
    }

    /// Reads `n`, `n,`, `,m` or `n,m` and the closing brace from `from`.
    /// Returns (min, max, index after the brace), None when the text is not
    /// an interval (extended syntax then reads `{` literally).
    fn interval(&self, from: usize) -> Result<Option<(u32, Option<u32>, usize)>, Error> {
        let mut at = from;
        let number = |at: &mut usize| -> Option<u64> {
            let start = *at;
            while self.chars.get(*at).is_some_and(char::is_ascii_digit) {
                *at += 1;
            }
            let digits: String = self.chars[start..*at].iter().collect();
            if digits.is_empty() {
                None
            } else {
                Some(digits.parse::<u64>().unwrap_or(u64::MAX))
            }
        };
        let min = number(&mut at);
        let max = if self.chars.get(at) == Some(&',') {
            at += 1;
            number(&mut at)
        } else {
            Some(min.unwrap_or(0))
        };
        let closed = if self.extended() {
            if self.chars.get(at) == Some(&'}') {
                at += 1;
                true
            } else {
                false
            }
        } else if self.chars.get(at) == Some(&'\\') && self.chars.get(at + 1) == Some(&'}') {
            at += 2;
            true
        } else {
            false
        };
        if !closed {
            if self.extended() {
                return Ok(None);
            }
            // `\{` with no `\}` anywhere after it.
            let rest: String = self.chars[from.min(self.chars.len())..].iter().collect();
            return if rest.contains("\\}") { error("Invalid content of \\{\\}") } else { error("Unmatched \\{") };
        }
        if min.is_none() && self.chars.get(from) != Some(&',') {
            return if self.extended() { Ok(None) } else { error("Invalid content of \\{\\}") };
        }
        let min = min.unwrap_or(0);
        if let Some(max) = max {
            if max < min {
                return error("Invalid content of \\{\\}");
            }
        }
        if min > u64::from(MAX_REPEAT) || max.is_some_and(|m| m > u64::from(MAX_REPEAT)) {
            return error(TOO_BIG);
        }
        Ok(Some((min as u32, max.map(|m| m as u32), at)))
    }

    /// A class or a range cannot start a range: `[[:alpha:]-z]` and
    /// `[a-c-e]` are errors, a `-` before the closing `]` is literal.
    fn no_range_after_item(&self) -> Result<(), Error> {
        if self.peek() == Some('-') && self.peek_at(1).is_some_and(|next| next != ']') {
            return error("Invalid range end");
        }
        Ok(())
    }

    fn bracket(&mut self) -> Result<Class, Error> {
        let open = self.at;
        let mut class = Class { negated: false, items: Vec::new() };
        if self.peek() == Some('^') {
            class.negated = true;
            self.at += 1;
        }
        let mut first = true;
        loop {
            let Some(c) = self.peek() else { return error(UNMATCHED_BRACKET) };
            if c == ']' && !first {
                self.at += 1;
                break;
            }
            first = false;
            let start = if c == '[' && matches!(self.peek_at(1), Some(':' | '=' | '.')) {
                let kind = self.peek_at(1).unwrap_or(':');
                let body_start = self.at + 2;
                let mut end = body_start;
                while end + 1 < self.chars.len() && !(self.chars[end] == kind && self.chars[end + 1] == ']') {
                    end += 1;
                }
                if end + 1 >= self.chars.len() {
                    return error(UNMATCHED_BRACKET);
                }
                let name: String = self.chars[body_start..end].iter().collect();
                self.at = end + 2;
                if kind == ':' {
                    match NamedClass::parse(&name) {
                        Some(named) => {
                            class.items.push(ClassItem::Named(named));
                            self.no_range_after_item()?;
                            continue;
                        }
                        None => return error("Invalid character class name"),
                    }
                }
                // `[=x=]` and `[.x.]`: the character itself.
                let mut letters = name.chars();
                match (letters.next(), letters.next()) {
                    (Some(only), None) => only,
                    _ => return error("Invalid collation character"),
                }
            } else {
                self.at += 1;
                c
            };
            if self.peek() == Some('-') && self.peek_at(1).is_some_and(|next| next != ']') {
                self.at += 1;
                let Some(end) = self.peek() else { return error(UNMATCHED_BRACKET) };
                self.at += 1;
                if end < start {
                    return error("Invalid range end");
                }
                class.items.push(ClassItem::Range(start, end));
                self.no_range_after_item()?;
            } else {
                class.items.push(ClassItem::Char(start));
            }
        }
        // `[:space:]` written without the outer brackets.
        let body: String = self.chars[open..self.at - 1].iter().collect();
        if body.len() >= 2 && body.starts_with(':') && body.ends_with(':') {
            return Err(Error { message: format!("character class syntax is [[:space:]], not [{body}]") });
        }
        Ok(class)
    }
}

#[derive(Clone, Debug)]
enum Inst {
    Char(char),
    Any,
    Class(Class),
    Assert(Assertion),
    Split(usize, usize),
    Jump(usize),
    /// Records the position in a submatch slot (group N's start is 2N, its end 2N+1).
    Save(usize),
    /// Matches the text group N matched.
    Backref(usize),
    Match,
}

/// A compiled pattern.
#[derive(Clone, Debug)]
pub struct Regex {
    program: Vec<Inst>,
    fold_case: bool,
    /// What its matching may spend, shared with the tool's other patterns.
    budget: Budget,
    /// How many groups the pattern has.
    pub groups: usize,
    /// The pattern has a back-reference: matched by walking its paths.
    backrefs: bool,
    /// Warnings grep prints before matching (`* at start of expression`).
    pub warnings: Vec<String>,
}

struct Compiler {
    program: Vec<Inst>,
    /// Nodes visited, so that nested repeats of empty groups stay bounded too.
    work: usize,
}

impl Compiler {
    fn push(&mut self, inst: Inst) -> Result<usize, Error> {
        if self.program.len() >= MAX_PROGRAM {
            return error(TOO_BIG);
        }
        self.program.push(inst);
        Ok(self.program.len() - 1)
    }

    fn emit(&mut self, ast: &Ast, fold: bool) -> Result<(), Error> {
        self.work += 1;
        if self.work > 50 * MAX_PROGRAM {
            return error(TOO_BIG);
        }
        match ast {
            Ast::Empty => {}
            Ast::Literal(c) => {
                self.push(Inst::Char(if fold { lower(*c) } else { *c }))?;
            }
            Ast::Any => {
                self.push(Inst::Any)?;
            }
            Ast::Class(class) => {
                self.push(Inst::Class(class.clone()))?;
            }
            Ast::Assert(assertion) => {
                self.push(Inst::Assert(*assertion))?;
            }
            Ast::Backref(number) => {
                self.push(Inst::Backref(*number))?;
            }
            Ast::Group(number, inner) => {
                self.push(Inst::Save(2 * number))?;
                self.emit(inner, fold)?;
                self.push(Inst::Save(2 * number + 1))?;
            }
            Ast::Concat(parts) => {
                for part in parts {
                    self.emit(part, fold)?;
                }
            }
            Ast::Alternation(branches) => {
                let mut jumps = Vec::new();
                for (index, branch) in branches.iter().enumerate() {
                    if index + 1 < branches.len() {
                        let split = self.push(Inst::Split(0, 0))?;
                        self.emit(branch, fold)?;
                        jumps.push(self.push(Inst::Jump(0))?);
                        let next = self.program.len();
                        self.program[split] = Inst::Split(split + 1, next);
                    } else {
                        self.emit(branch, fold)?;
                    }
                }
                let end = self.program.len();
                for jump in jumps {
                    self.program[jump] = Inst::Jump(end);
                }
            }
            Ast::Repeat(inner, min, max) => {
                for _ in 0..*min {
                    self.emit(inner, fold)?;
                }
                match max {
                    None => {
                        // L: split body, out; body; jump L
                        let split = self.push(Inst::Split(0, 0))?;
                        self.emit(inner, fold)?;
                        self.push(Inst::Jump(split))?;
                        let out = self.program.len();
                        self.program[split] = Inst::Split(split + 1, out);
                    }
                    Some(max) => {
                        let mut splits = Vec::new();
                        for _ in *min..*max {
                            splits.push(self.push(Inst::Split(0, 0))?);
                            self.emit(inner, fold)?;
                        }
                        let out = self.program.len();
                        for split in splits {
                            self.program[split] = Inst::Split(split + 1, out);
                        }
                    }
                }
            }
        }
        Ok(())
    }
}

/// A tool's matching budget: matching is linear in text x program, and
/// both can be large, so a tool's matching altogether may take at most
/// `MAX_REGEX_STEPS` thread steps; past it, matches fail and the tool says
/// so. A pattern compiled alone has a budget of its own; a tool's patterns
/// share one (`Regex::sharing`). Carried by the patterns, never global, so
/// one tool's spending never reaches another's.
#[derive(Clone, Debug, Default)]
pub struct Budget(Rc<Cell<u64>>);

impl Budget {
    /// Whether the matching ran out of budget.
    pub fn exhausted(&self) -> bool {
        self.0.get() > crate::limits::MAX_REGEX_STEPS
    }

    /// Spends `steps`; false once the budget is exhausted.
    fn spend(&self, steps: u64) -> bool {
        self.0.set(self.0.get().saturating_add(steps));
        !self.exhausted()
    }
}

/// The threads alive at one position: program counters and where each
/// thread's match started, in order of increasing start.
struct Threads {
    pcs: Vec<usize>,
    starts: Vec<usize>,
    /// `seen[pc] == generation` when pc is already in this list.
    seen: Vec<u64>,
    generation: u64,
}

impl Threads {
    fn new(size: usize) -> Threads {
        Threads { pcs: Vec::new(), starts: Vec::new(), seen: vec![0; size], generation: 1 }
    }

    fn clear(&mut self) {
        self.pcs.clear();
        self.starts.clear();
        self.generation += 1;
    }
}

impl Regex {
    pub fn new(pattern: &str, syntax: Syntax, fold_case: bool) -> Result<Regex, Error> {
        Regex::build(pattern, syntax, fold_case, false)
    }

    /// grep -P, approximated as extended syntax plus `\d \D \t`.
    pub fn new_perlish(pattern: &str, fold_case: bool) -> Result<Regex, Error> {
        Regex::build(pattern, Syntax::Extended, fold_case, true)
    }

    /// A fixed string (grep -F): every character literal.
    pub fn literal(text: &str, fold_case: bool) -> Result<Regex, Error> {
        let ast = Ast::Concat(text.chars().map(Ast::Literal).collect());
        Regex::from_ast(&ast, fold_case, Vec::new(), 0, false)
    }

    fn build(pattern: &str, syntax: Syntax, fold_case: bool, perl: bool) -> Result<Regex, Error> {
        let mut parser = Parser {
            chars: pattern.chars().collect(),
            at: 0,
            syntax,
            perl,
            warnings: Vec::new(),
            groups: 0,
            open: Vec::new(),
            backrefs: false,
            _pattern: pattern,
        };
        let ast = parser.alternation(0)?;
        if parser.peek().is_some() {
            // Only an unmatched `)` stops the top level.
            return error("Unmatched ) or \\)");
        }
        Regex::from_ast(&ast, fold_case, parser.warnings, parser.groups, parser.backrefs)
    }

    fn from_ast(ast: &Ast, fold_case: bool, warnings: Vec<String>, groups: usize, backrefs: bool) -> Result<Regex, Error> {
        let mut compiler = Compiler { program: Vec::new(), work: 0 };
        compiler.emit(ast, fold_case)?;
        compiler.push(Inst::Match)?;
        Ok(Regex { program: compiler.program, fold_case, groups, backrefs, warnings, budget: Budget::default() })
    }

    /// This pattern, spending from `budget` (a tool's patterns share one).
    pub fn sharing(mut self, budget: &Budget) -> Regex {
        self.budget = budget.clone();
        self
    }

    fn assertion_holds(assertion: Assertion, text: &[char], at: usize) -> bool {
        let before = at.checked_sub(1).and_then(|i| text.get(i)).is_some_and(|&c| is_word_char(c));
        let after = text.get(at).is_some_and(|&c| is_word_char(c));
        match assertion {
            Assertion::LineStart => at == 0,
            Assertion::LineEnd => at == text.len(),
            Assertion::WordBoundary => before != after,
            Assertion::NotWordBoundary => before == after,
            Assertion::WordStart => !before && after,
            Assertion::WordEnd => before && !after,
        }
    }

    /// Adds `pc` and everything reachable from it without consuming text.
    fn add(&self, list: &mut Threads, pc: usize, start: usize, text: &[char], at: usize) {
        let mut stack = vec![pc];
        while let Some(pc) = stack.pop() {
            if pc >= self.program.len() || list.seen[pc] == list.generation {
                continue;
            }
            list.seen[pc] = list.generation;
            match &self.program[pc] {
                Inst::Jump(to) => stack.push(*to),
                Inst::Save(_) => stack.push(pc + 1),
                Inst::Split(first, second) => {
                    stack.push(*second);
                    stack.push(*first);
                }
                Inst::Assert(assertion) => {
                    if Regex::assertion_holds(*assertion, text, at) {
                        stack.push(pc + 1);
                    }
                }
                _ => {
                    list.pcs.push(pc);
                    list.starts.push(start);
                }
            }
        }
    }

    fn consumes(&self, inst: &Inst, c: char) -> bool {
        match inst {
            Inst::Char(x) => *x == c || (self.fold_case && *x == lower(c)),
            Inst::Any => true,
            Inst::Class(class) => class.matches(c, self.fold_case),
            _ => false,
        }
    }

    /// The leftmost-longest match starting at or after `from`, as
    /// (start, end) character offsets.
    pub fn find_at(&self, text: &[char], from: usize) -> Option<(usize, usize)> {
        self.run(text, from, false).0
    }

    /// Every end offset of a match that starts exactly at `start`.
    pub fn ends_from(&self, text: &[char], start: usize) -> Vec<usize> {
        self.run(text, start, true).1
    }

    fn run(&self, text: &[char], from: usize, anchored: bool) -> (Option<(usize, usize)>, Vec<usize>) {
        if self.backrefs {
            return self.run_backtracking(text, from, anchored);
        }
        let size = self.program.len();
        let mut current = Threads::new(size);
        let mut next = Threads::new(size);
        let mut best: Option<(usize, usize)> = None;
        let mut ends = Vec::new();
        if from > text.len() {
            return (None, ends);
        }
        for at in from..=text.len() {
            if !self.budget.spend(current.pcs.len() as u64 + 1) {
                return (None, Vec::new());
            }
            if best.is_none() && (!anchored || at == from) {
                self.add(&mut current, 0, at, text, at);
            }
            if current.pcs.is_empty() && (best.is_some() || anchored) {
                break;
            }
            // Record matches; once one is found, threads that started later lose.
            for index in 0..current.pcs.len() {
                if matches!(self.program[current.pcs[index]], Inst::Match) {
                    let start = current.starts[index];
                    if anchored {
                        ends.push(at);
                    } else {
                        best = match best {
                            Some((s, e)) if s < start || (s == start && e >= at) => Some((s, e)),
                            _ => Some((start, at)),
                        };
                    }
                }
            }
            let Some(&c) = text.get(at) else { break };
            next.clear();
            for index in 0..current.pcs.len() {
                let pc = current.pcs[index];
                let start = current.starts[index];
                if !anchored && best.is_some_and(|(s, _)| start > s) {
                    continue;
                }
                if self.consumes(&self.program[pc], c) {
                    self.add(&mut next, pc + 1, start, text, at + 1);
                }
            }
            std::mem::swap(&mut current, &mut next);
        }
        (best, ends)
    }

    pub fn is_match(&self, text: &[char]) -> bool {
        self.find_at(text, 0).is_some()
    }

    /// The groups' submatches of the match `text[start..end]` (found by
    /// `find_at`): slot N is group N's (start, end), slot 0 the whole match;
    /// a group that took no part is None. Of the ways to match, the first
    /// in the pattern's order (greedy repeats, earlier alternatives) decides,
    /// and a repeated group keeps its last iteration.
    pub fn captures(&self, text: &[char], start: usize, end: usize) -> Vec<Option<(usize, usize)>> {
        let mut found = None;
        // No path past `end` can end the match there: the walk stops at it.
        self.walk(text, start, end, &mut |at, slots| {
            if at == end {
                found = Some(slots.to_vec());
            }
            at == end
        });
        let slots = found.unwrap_or_default();
        let mut groups = vec![Some((start, end))];
        for number in 1..=self.groups {
            let pair = match (slots.get(2 * number).copied().flatten(), slots.get(2 * number + 1).copied().flatten()) {
                (Some(from), Some(to)) if from <= to => Some((from, to)),
                _ => None,
            };
            groups.push(pair);
        }
        groups
    }

    /// Matching for patterns with back-references: from each start, every
    /// end a path reaches.
    fn run_backtracking(&self, text: &[char], from: usize, anchored: bool) -> (Option<(usize, usize)>, Vec<usize>) {
        let last = if anchored { from.min(text.len()) } else { text.len() };
        for start in from..=last {
            let mut ends = Vec::new();
            self.walk(text, start, text.len(), &mut |at, _| {
                ends.push(at);
                false
            });
            if anchored {
                crate::sort::sort(&mut ends);
                ends.dedup();
                return (None, ends);
            }
            if let Some(&end) = ends.iter().max() {
                return (Some((start, end)), Vec::new());
            }
            if self.budget.exhausted() {
                break;
            }
        }
        (None, Vec::new())
    }

    /// Walks the pattern's paths from `start` depth first, in the pattern's
    /// order, consuming no text past `limit` (assertions still see all of
    /// it), calling `matched(end, slots)` at each match until it returns
    /// true. A state (instruction, position, slots when the pattern has
    /// back-references) is visited once, so a walk without back-references
    /// is linear; every step spends from the budget.
    fn walk(&self, text: &[char], start: usize, limit: usize, matched: &mut dyn FnMut(usize, &[Option<usize>]) -> bool) {
        enum Step {
            Visit(usize, usize),
            Restore(usize, Option<usize>),
        }
        let mut slots: Vec<Option<usize>> = vec![None; 2 * self.groups + 2];
        let mut visited = std::collections::HashSet::new();
        let mut stack = vec![Step::Visit(0, start)];
        while let Some(step) = stack.pop() {
            let (pc, at) = match step {
                Step::Restore(slot, old) => {
                    slots[slot] = old;
                    continue;
                }
                Step::Visit(pc, at) => (pc, at),
            };
            let state = if self.backrefs { (pc, at, slots.clone()) } else { (pc, at, Vec::new()) };
            if pc >= self.program.len() || !visited.insert(state) {
                continue;
            }
            if !self.budget.spend(1) {
                break;
            }
            match &self.program[pc] {
                Inst::Match => {
                    if matched(at, &slots) {
                        break;
                    }
                }
                Inst::Jump(to) => stack.push(Step::Visit(*to, at)),
                Inst::Split(first, second) => {
                    stack.push(Step::Visit(*second, at));
                    stack.push(Step::Visit(*first, at));
                }
                Inst::Assert(assertion) => {
                    if Regex::assertion_holds(*assertion, text, at) {
                        stack.push(Step::Visit(pc + 1, at));
                    }
                }
                Inst::Save(slot) => {
                    stack.push(Step::Restore(*slot, slots[*slot]));
                    slots[*slot] = Some(at);
                    stack.push(Step::Visit(pc + 1, at));
                }
                Inst::Backref(number) => {
                    // A group that took no part matches nothing, as in GNU.
                    if let (Some(from), Some(to)) = (slots[2 * number], slots[2 * number + 1]) {
                        let length = to.saturating_sub(from);
                        let same = at + length <= limit
                            && (0..length).all(|i| {
                                let (a, b) = (text[from + i], text[at + i]);
                                a == b || (self.fold_case && lower(a) == lower(b))
                            });
                        if same {
                            stack.push(Step::Visit(pc + 1, at + length));
                        }
                    }
                }
                inst => {
                    if at < limit && self.consumes(inst, text[at]) {
                        stack.push(Step::Visit(pc + 1, at + 1));
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn find(pattern: &str, syntax: Syntax, text: &str) -> Option<String> {
        let regex = Regex::new(pattern, syntax, false).unwrap();
        let chars: Vec<char> = text.chars().collect();
        regex.find_at(&chars, 0).map(|(s, e)| chars[s..e].iter().collect())
    }

    fn ere(pattern: &str, text: &str) -> Option<String> {
        find(pattern, Syntax::Extended, text)
    }

    fn bre(pattern: &str, text: &str) -> Option<String> {
        find(pattern, Syntax::Basic, text)
    }

    fn compile_error(pattern: &str, syntax: Syntax) -> String {
        Regex::new(pattern, syntax, false).err().map(|e| e.message).unwrap_or_default()
    }

    fn groups(pattern: &str, syntax: Syntax, text: &str) -> Vec<Option<String>> {
        let regex = Regex::new(pattern, syntax, false).unwrap();
        let chars: Vec<char> = text.chars().collect();
        let (start, end) = regex.find_at(&chars, 0).unwrap();
        regex.captures(&chars, start, end).into_iter().map(|g| g.map(|(s, e)| chars[s..e].iter().collect())).collect()
    }

    #[test]
    fn submatches_for_sed() {
        let some = |v: &[&str]| v.iter().map(|s| Some(s.to_string())).collect::<Vec<_>>();
        assert_eq!(groups("\\(mlx5_\\)\\([0-9]*\\)", Syntax::Basic, "dev mlx5_12 up"), some(&["mlx5_12", "mlx5_", "12"]));
        assert_eq!(groups("(a|ab)(c|bcd)", Syntax::Extended, "abcd"), some(&["abcd", "a", "bcd"]));
        // A repeated group keeps its last iteration; one that took no part is None.
        assert_eq!(groups("(x.)+", Syntax::Extended, "x1x2x3"), some(&["x1x2x3", "x3"]));
        assert_eq!(groups("a(z)?b", Syntax::Extended, "ab"), vec![Some("ab".to_string()), None]);
    }

    #[test]
    fn leftmost_longest() {
        assert_eq!(ere("a|ab|abc", "xabcd").as_deref(), Some("abc"));
        assert_eq!(ere("abcd|c", "abcd").as_deref(), Some("abcd"));
        assert_eq!(ere("b*", "abc").as_deref(), Some(""));
        assert_eq!(ere("x+", "axxxb").as_deref(), Some("xxx"));
        assert_eq!(ere("(ab)+c?", "zababab").as_deref(), Some("ababab"));
    }

    #[test]
    fn basic_and_extended_operators() {
        assert_eq!(bre("a\\{2,3\\}", "aaaa").as_deref(), Some("aaa"));
        assert_eq!(ere("a{2}", "aaaa").as_deref(), Some("aa"));
        assert_eq!(ere("a{,2}b", "aaab").as_deref(), Some("aab"));
        assert_eq!(bre("a+", "a+").as_deref(), Some("a+"));
        assert_eq!(bre("a\\+", "aaa").as_deref(), Some("aaa"));
        assert_eq!(bre("x\\|y", "ay").as_deref(), Some("y"));
        assert_eq!(bre("\\(ab\\)*c", "ababc").as_deref(), Some("ababc"));
        assert_eq!(bre("*a", "x*a").as_deref(), Some("*a"));
        assert_eq!(bre("a$b", "a$b").as_deref(), Some("a$b"));
        assert_eq!(bre("a^b", "a^b").as_deref(), Some("a^b"));
        assert_eq!(ere("a{", "a{").as_deref(), Some("a{"));
        assert_eq!(ere("a)", "a)").as_deref(), Some("a)"));
        assert_eq!(ere("^ab$", "ab").as_deref(), Some("ab"));
        assert_eq!(ere("^b", "ab"), None);
    }

    #[test]
    fn classes_and_escapes() {
        assert_eq!(ere("[0-9]+", "GPU 17 x").as_deref(), Some("17"));
        assert_eq!(ere("[[:digit:]]+%", "at 45% now").as_deref(), Some("45%"));
        assert_eq!(ere("[]a]+", "x]a]").as_deref(), Some("]a]"));
        assert_eq!(ere("[^ ]+", "  word ").as_deref(), Some("word"));
        assert_eq!(ere("[a-]+", "x-a-").as_deref(), Some("-a-"));
        assert_eq!(ere("\\w+", "  mlx5_0 ").as_deref(), Some("mlx5_0"));
        assert_eq!(ere("\\bab\\b", "cab ab").as_deref(), Some("ab"));
        assert_eq!(ere("\\<ab", "cab abc").as_deref(), Some("ab"));
        assert_eq!(ere("a\\.b", "axb a.b").as_deref(), Some("a.b"));
        let folded = Regex::new("nvidia [a-c]", Syntax::Basic, true).unwrap();
        assert!(folded.is_match(&"NVIDIA B".chars().collect::<Vec<_>>()));
    }

    #[test]
    fn errors_are_grep_messages() {
        assert_eq!(compile_error("[a", Syntax::Basic), UNMATCHED_BRACKET);
        assert_eq!(compile_error("a\\(", Syntax::Basic), "Unmatched ( or \\(");
        assert_eq!(compile_error("a\\)", Syntax::Basic), "Unmatched ) or \\)");
        assert_eq!(compile_error("(a", Syntax::Extended), "Unmatched ( or \\(");
        assert_eq!(compile_error("a\\{1", Syntax::Basic), "Unmatched \\{");
        assert_eq!(compile_error("a\\{x\\}", Syntax::Basic), "Invalid content of \\{\\}");
        assert_eq!(compile_error("a\\{2,1\\}", Syntax::Basic), "Invalid content of \\{\\}");
        assert_eq!(compile_error("a\\", Syntax::Basic), "Trailing backslash");
        assert_eq!(compile_error("[z-a]", Syntax::Basic), "Invalid range end");
        assert_eq!(compile_error("[:space:]", Syntax::Basic), "character class syntax is [[:space:]], not [:space:]");
        assert_eq!(compile_error("[[:foo:]]", Syntax::Basic), "Invalid character class name");
        assert_eq!(compile_error("a\\{40000\\}", Syntax::Basic), TOO_BIG);
        assert_eq!(compile_error("(a{1000}){1000}", Syntax::Extended), TOO_BIG);
        assert_eq!(compile_error("((){30000}){30000}", Syntax::Extended), TOO_BIG);
    }

    #[test]
    fn pathological_patterns_finish() {
        let text: Vec<char> = "a".repeat(2000).chars().collect();
        let regex = Regex::new("(a*)*(a|aa)*b", Syntax::Extended, false).unwrap();
        assert!(!regex.is_match(&text));
        let regex = Regex::new("(|a)*(()*)*$", Syntax::Extended, false).unwrap();
        assert!(regex.is_match(&text));
    }

    #[test]
    fn anchored_ends() {
        let regex = Regex::new("fo*", Syntax::Basic, false).unwrap();
        let text: Vec<char> = "foo".chars().collect();
        assert_eq!(regex.ends_from(&text, 0), [1, 2, 3]);
        assert!(regex.ends_from(&text, 1).is_empty());
    }

    proptest::proptest! {
        #[test]
        fn arbitrary_patterns_never_panic(pattern in "[ab.*+?|(){}\\\\\\[\\]^$:,0-9-]{0,16}", text in "[ab(){}\\[\\] 0-9]{0,24}") {
            let chars: Vec<char> = text.chars().collect();
            for syntax in [Syntax::Basic, Syntax::Extended] {
                if let Ok(regex) = Regex::new(&pattern, syntax, true) {
                    let _ = regex.find_at(&chars, 0);
                    let _ = regex.ends_from(&chars, chars.len());
                }
            }
        }
    }
}
