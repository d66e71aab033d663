//! Parsing a command line the way bash does, for the subset the lab needs:
//! quoting (`'...'`, `"..."`, backslash), parameter expansion (`$NAME`,
//! `${NAME}`, `$?`), pipelines (`|`) and lists (`;`, `&&`, `||`).
//!
//! Expansion is deferred: a word keeps its parts so that `a=1; echo $a`-style
//! lists expand each command with the state the previous ones left.

/// One piece of a word.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Part {
    /// Text taken literally.
    Literal(String),
    /// `$NAME` or `${NAME}`; `quoted` is true inside double quotes, where the
    /// value is not split into words.
    Parameter { name: String, quoted: bool },
}

/// A word: its parts, and whether any of it was quoted (a quoted empty
/// string is still a word: `echo ""`).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Word {
    pub parts: Vec<Part>,
    pub quoted: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Connector {
    /// `;` or the end of the line: run the next pipeline regardless.
    Always,
    /// `&&`: run the next pipeline if this one succeeded.
    IfSuccess,
    /// `||`: run the next pipeline if this one failed.
    IfFailure,
    /// `&`: this pipeline runs in the background; the next one runs at once.
    Background,
}

/// `cmd | cmd | ...`: each command is its words.
pub type Pipeline = Vec<Vec<Word>>;

/// A parsed line: pipelines, each followed by how the next one is chained.
pub type List = Vec<(Pipeline, Connector)>;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SyntaxError {
    /// `syntax error near unexpected token `X'`
    UnexpectedToken(String),
    /// A quote was opened and never closed.
    UnterminatedQuote(char),
}

impl SyntaxError {
    /// The message bash prints, without the `-bash: ` prefix.
    pub fn message(&self) -> String {
        match self {
            SyntaxError::UnexpectedToken(token) => format!("syntax error near unexpected token `{token}'"),
            SyntaxError::UnterminatedQuote(quote) => {
                format!("unexpected EOF while looking for matching `{quote}'")
            }
        }
    }
}

#[derive(Debug, PartialEq)]
enum Token {
    Word(Word),
    Pipe,
    And,
    Or,
    Semi,
    Amp,
}

fn token_text(token: &Token) -> &'static str {
    match token {
        Token::Pipe => "|",
        Token::And => "&&",
        Token::Or => "||",
        Token::Semi => ";",
        Token::Amp => "&",
        Token::Word(_) => "word",
    }
}

pub fn parse(line: &str) -> Result<List, SyntaxError> {
    let tokens = tokenize(line)?;
    let mut list = List::new();
    let mut pipeline: Pipeline = Vec::new();
    let mut command: Vec<Word> = Vec::new();
    let mut tokens = tokens.into_iter().peekable();
    while let Some(token) = tokens.next() {
        match token {
            Token::Word(word) => command.push(word),
            operator => {
                if command.is_empty() {
                    return Err(SyntaxError::UnexpectedToken(token_text(&operator).to_string()));
                }
                pipeline.push(std::mem::take(&mut command));
                let connector = match operator {
                    Token::Pipe => continue,
                    Token::And => Connector::IfSuccess,
                    Token::Or => Connector::IfFailure,
                    Token::Amp => Connector::Background,
                    _ => Connector::Always,
                };
                list.push((std::mem::take(&mut pipeline), connector));
                // `a;` and `a &` are fine; `a &&` at the end is not.
                if tokens.peek().is_none() && !matches!(connector, Connector::Always | Connector::Background) {
                    return Err(SyntaxError::UnexpectedToken("newline".to_string()));
                }
            }
        }
    }
    if !command.is_empty() {
        pipeline.push(command);
        list.push((pipeline, Connector::Always));
    } else if !pipeline.is_empty() {
        // The line ended right after `|`.
        return Err(SyntaxError::UnexpectedToken("newline".to_string()));
    }
    Ok(list)
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

fn tokenize(line: &str) -> Result<Vec<Token>, SyntaxError> {
    let chars: Vec<char> = line.chars().collect();
    let mut tokens = Vec::new();
    let mut word = Word::default();
    let mut in_word = false;
    let mut literal = String::new();
    let mut at = 0;

    fn flush_literal(word: &mut Word, literal: &mut String) {
        if !literal.is_empty() {
            word.parts.push(Part::Literal(std::mem::take(literal)));
        }
    }

    while at < chars.len() {
        let c = chars[at];
        match c {
            ' ' | '\t' | '\n' => {
                if in_word {
                    flush_literal(&mut word, &mut literal);
                    tokens.push(Token::Word(std::mem::take(&mut word)));
                    in_word = false;
                }
                at += 1;
            }
            '|' | '&' | ';' => {
                if in_word {
                    flush_literal(&mut word, &mut literal);
                    tokens.push(Token::Word(std::mem::take(&mut word)));
                    in_word = false;
                }
                let doubled = chars.get(at + 1) == Some(&c);
                let token = match (c, doubled) {
                    ('|', true) => Token::Or,
                    ('|', false) => Token::Pipe,
                    ('&', true) => Token::And,
                    ('&', false) => Token::Amp,
                    (';', true) => return Err(SyntaxError::UnexpectedToken(";;".to_string())),
                    _ => Token::Semi,
                };
                at += if doubled { 2 } else { 1 };
                tokens.push(token);
            }
            '\'' => {
                in_word = true;
                word.quoted = true;
                let close = chars[at + 1..].iter().position(|&d| d == '\'');
                let Some(close) = close else {
                    return Err(SyntaxError::UnterminatedQuote('\''));
                };
                literal.extend(&chars[at + 1..at + 1 + close]);
                at += close + 2;
            }
            '"' => {
                in_word = true;
                word.quoted = true;
                at += 1;
                loop {
                    let Some(&d) = chars.get(at) else {
                        return Err(SyntaxError::UnterminatedQuote('"'));
                    };
                    match d {
                        '"' => {
                            at += 1;
                            break;
                        }
                        '\\' if matches!(chars.get(at + 1), Some('$' | '`' | '"' | '\\' | '\n')) => {
                            literal.push(chars[at + 1]);
                            at += 2;
                        }
                        '$' => at += expand_dollar(&chars[at..], true, &mut word, &mut literal),
                        _ => {
                            literal.push(d);
                            at += 1;
                        }
                    }
                }
            }
            '\\' => {
                in_word = true;
                match chars.get(at + 1) {
                    Some('\n') => {}
                    Some(&next) => literal.push(next),
                    None => {}
                }
                at += 2;
            }
            '$' => {
                in_word = true;
                at += expand_dollar(&chars[at..], false, &mut word, &mut literal);
            }
            '#' if !in_word => break,
            _ => {
                in_word = true;
                literal.push(c);
                at += 1;
            }
        }
    }
    if in_word {
        flush_literal(&mut word, &mut literal);
        tokens.push(Token::Word(word));
    }
    Ok(tokens)
}

/// Adds the parameter at the start of `chars` to the word (a lone `$` is
/// literal) and returns how many characters it used.
fn expand_dollar(chars: &[char], quoted: bool, word: &mut Word, literal: &mut String) -> usize {
    let (part, used) = parameter(chars, quoted);
    match part {
        Some(part) => {
            if !literal.is_empty() {
                word.parts.push(Part::Literal(std::mem::take(literal)));
            }
            word.parts.push(part);
        }
        None => literal.push('$'),
    }
    used
}

/// Reads `$NAME`, `${NAME}` or `$?` at the start of `chars`. Returns the part
/// (None for a lone `$`) and how many characters it used.
fn parameter(chars: &[char], quoted: bool) -> (Option<Part>, usize) {
    let make = |name: String| Some(Part::Parameter { name, quoted });
    match chars.get(1) {
        Some('?') | Some('$') | Some('#') => (make(chars[1].to_string()), 2),
        Some('{') => {
            // Only a name fits between the braces: the scan stops at the
            // first other character, so a line of `${` costs linear time.
            let len = chars[2..].iter().take_while(|&&c| is_name_char(c) || "?$#".contains(c)).count();
            match chars.get(2 + len) {
                Some('}') => (make(chars[2..2 + len].iter().collect()), len + 3),
                _ => (None, 1),
            }
        }
        Some(&c) if is_name_char(c) && !c.is_ascii_digit() => {
            let len = chars[1..].iter().take_while(|&&c| is_name_char(c)).count();
            (make(chars[1..1 + len].iter().collect()), len + 1)
        }
        Some(&c) if c.is_ascii_digit() => (make(c.to_string()), 2),
        _ => (None, 1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lit(text: &str) -> Word {
        Word { parts: vec![Part::Literal(text.to_string())], quoted: false }
    }

    #[test]
    fn splits_words_and_operators() {
        let list = parse("nvidia-smi -L | wc -l && echo ok; false || echo no").unwrap();
        assert_eq!(list.len(), 4);
        assert_eq!(list[0].0, vec![vec![lit("nvidia-smi"), lit("-L")], vec![lit("wc"), lit("-l")]]);
        assert_eq!(list[0].1, Connector::IfSuccess);
        assert_eq!(list[1].1, Connector::Always);
        assert_eq!(list[2].1, Connector::IfFailure);
        assert_eq!(list[3].1, Connector::Always);
    }

    #[test]
    fn quotes_join_and_protect() {
        let list = parse(r#"echo 'a  b'"c d"\ e"#).unwrap();
        let word = &list[0].0[0][1];
        assert_eq!(word.parts, vec![Part::Literal("a  bc d e".to_string())]);
        assert!(word.quoted);
        let list = parse(r#"echo "" '' x#y # comment"#).unwrap();
        assert_eq!(list[0].0[0].len(), 4);
    }

    #[test]
    fn parameters_are_kept_for_later_expansion() {
        let list = parse(r#"echo $HOME "${USER}x" '$NOT' $? $"#).unwrap();
        let words = &list[0].0[0];
        assert_eq!(words[1].parts, vec![Part::Parameter { name: "HOME".into(), quoted: false }]);
        assert_eq!(
            words[2].parts,
            vec![Part::Parameter { name: "USER".into(), quoted: true }, Part::Literal("x".into())]
        );
        assert_eq!(words[3].parts, vec![Part::Literal("$NOT".into())]);
        assert_eq!(words[4].parts, vec![Part::Parameter { name: "?".into(), quoted: false }]);
        assert_eq!(words[5].parts, vec![Part::Literal("$".into())]);
    }

    #[test]
    fn syntax_errors_read_like_bash() {
        assert_eq!(parse("| wc").unwrap_err().message(), "syntax error near unexpected token `|'");
        assert_eq!(parse("a &&").unwrap_err().message(), "syntax error near unexpected token `newline'");
        assert_eq!(parse("a |").unwrap_err().message(), "syntax error near unexpected token `newline'");
        assert_eq!(parse("echo 'x").unwrap_err().message(), "unexpected EOF while looking for matching `''");
        assert_eq!(parse("a ; ; b").unwrap_err(), SyntaxError::UnexpectedToken(";".into()));
        assert_eq!(parse("& a").unwrap_err().message(), "syntax error near unexpected token `&'");
        assert_eq!(parse("a & b &").unwrap().iter().map(|(_, c)| *c).collect::<Vec<_>>(), [Connector::Background, Connector::Background]);
        assert!(parse("").unwrap().is_empty());
        assert!(parse("a;").is_ok());
    }
}
