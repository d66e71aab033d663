//! Line editing as readline does it in bash's default (emacs) mode: the
//! edits on (text, cursor) the terminal's keys make, kept free of the DOM.
//! Cursors count characters; the input element counts UTF-16 units, and
//! [`to_utf16`] / [`from_utf16`] convert.

/// A line being edited: its text and where the cursor is (in characters).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Line {
    pub text: String,
    pub cursor: usize,
}

/// What a key did to the line, and any text it killed (for Ctrl-Y).
pub struct Edit {
    pub line: Line,
    pub killed: Option<String>,
}

fn chars(text: &str) -> Vec<char> {
    text.chars().collect()
}

/// Where the word before `cursor` starts (bash's Alt-B and Ctrl-W stop at
/// whitespace; Alt-B also at punctuation, close enough here).
fn word_start(chars: &[char], cursor: usize) -> usize {
    let mut at = cursor.min(chars.len());
    while at > 0 && chars[at - 1].is_whitespace() {
        at -= 1;
    }
    while at > 0 && !chars[at - 1].is_whitespace() {
        at -= 1;
    }
    at
}

/// Where the word after `cursor` ends (Alt-F).
fn word_end(chars: &[char], cursor: usize) -> usize {
    let mut at = cursor.min(chars.len());
    while at < chars.len() && chars[at].is_whitespace() {
        at += 1;
    }
    while at < chars.len() && !chars[at].is_whitespace() {
        at += 1;
    }
    at
}

/// The edit a Ctrl or Alt key makes: `key` is the letter (lower case).
/// None for keys that are not line edits.
pub fn edit(line: &Line, key: char, alt: bool, yank: &str) -> Option<Edit> {
    let chars = chars(&line.text);
    let cursor = line.cursor.min(chars.len());
    let at = |cursor: usize| Some(Edit { line: Line { text: line.text.clone(), cursor }, killed: None });
    let cut = |from: usize, to: usize| {
        let killed: String = chars[from..to].iter().collect();
        let text: String = chars[..from].iter().chain(&chars[to..]).collect();
        Some(Edit { line: Line { text, cursor: from }, killed: (!killed.is_empty()).then_some(killed) })
    };
    match (alt, key) {
        (false, 'a') => at(0),
        (false, 'e') => at(chars.len()),
        (false, 'b') => at(cursor.saturating_sub(1)),
        (false, 'f') => at((cursor + 1).min(chars.len())),
        (true, 'b') => at(word_start(&chars, cursor)),
        (true, 'f') => at(word_end(&chars, cursor)),
        (false, 'u') => cut(0, cursor),
        (false, 'k') => cut(cursor, chars.len()),
        (false, 'w') => cut(word_start(&chars, cursor), cursor),
        (true, 'd') => cut(cursor, word_end(&chars, cursor)),
        (false, 'd') if cursor < chars.len() => cut(cursor, cursor + 1).map(|edit| Edit { killed: None, ..edit }),
        (false, 'y') => {
            let text: String = chars[..cursor].iter().copied().chain(yank.chars()).chain(chars[cursor..].iter().copied()).collect();
            Some(Edit { line: Line { text, cursor: cursor + yank.chars().count() }, killed: None })
        }
        _ => None,
    }
}

/// The most recent history line before `before` (an index into
/// `history`) that contains `query`: its index.
pub fn search_back(history: &[String], query: &str, before: usize) -> Option<usize> {
    history[..before.min(history.len())].iter().rposition(|line| line.contains(query))
}

/// A UTF-16 offset (the input element's) as a character index.
pub fn from_utf16(text: &str, offset: u32) -> usize {
    let mut units = 0u32;
    for (index, c) in text.chars().enumerate() {
        if units >= offset {
            return index;
        }
        units += c.len_utf16() as u32;
    }
    text.chars().count()
}

/// A character index as the input element's UTF-16 offset.
pub fn to_utf16(text: &str, cursor: usize) -> u32 {
    text.chars().take(cursor).map(|c| c.len_utf16() as u32).sum()
}

/// A pasted text over the line at its cursor: the complete lines to run
/// in order, and the line left in the input.
pub fn paste(line: &Line, pasted: &str) -> (Vec<String>, Line) {
    let chars = chars(&line.text);
    let cursor = line.cursor.min(chars.len());
    let before: String = chars[..cursor].iter().collect();
    let after: String = chars[cursor..].iter().collect();
    let joined = format!("{before}{}", pasted.replace("\r\n", "\n").replace('\r', "\n"));
    let mut lines: Vec<String> = joined.split('\n').map(str::to_string).collect();
    let last = lines.pop().unwrap_or_default();
    let cursor = last.chars().count();
    (lines, Line { text: format!("{last}{after}"), cursor })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(text: &str, cursor: usize) -> Line {
        Line { text: text.into(), cursor }
    }

    #[test]
    fn kills_and_yanks_like_readline() {
        let edited = edit(&line("ibstat mlx5_0 1", 15), 'w', false, "").unwrap();
        assert_eq!((edited.line, edited.killed.as_deref()), (line("ibstat mlx5_0 ", 14), Some("1")));
        let edited = edit(&line("nvidia-smi -q", 6), 'u', false, "").unwrap();
        assert_eq!(edited.line, line("-smi -q", 0));
        let edited = edit(&line("ab", 1), 'y', false, "XY").unwrap();
        assert_eq!(edited.line, line("aXYb", 3));
        assert_eq!(edit(&line("one two", 7), 'b', true, "").unwrap().line.cursor, 4);
        assert_eq!(edit(&line("one two", 0), 'f', true, "").unwrap().line.cursor, 3);
    }

    #[test]
    fn searches_and_pastes() {
        let history = vec!["ibstat".to_string(), "nvidia-smi -L".to_string(), "ibstatus".to_string()];
        assert_eq!(search_back(&history, "ibs", 3), Some(2));
        assert_eq!(search_back(&history, "ibs", 2), Some(0));
        assert_eq!(search_back(&history, "zz", 3), None);
        let (lines, rest) = paste(&line("echo ", 5), "a\r\nb\nc");
        assert_eq!((lines, rest), (vec!["echo a".to_string(), "b".to_string()], line("c", 1)));
        assert_eq!(from_utf16("é𝄞x", 3), 2);
        assert_eq!(to_utf16("é𝄞x", 2), 3);
    }
}
