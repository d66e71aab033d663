//! Backslash escapes, as `echo -e` and awk's `-v` assignments read them.
//! Each reader knows its own escapes; the scan over the text is shared.

/// What a backslash and the character after it stand for.
pub enum Escape {
    Char(char),
    /// The text ends here (`echo -e`'s `\c`).
    Stop,
    /// Not an escape to this reader: both characters stay as written.
    Unknown,
}

/// Replaces each backslash escape with what `meaning` says it stands for; a
/// lone backslash at the end stays. Returns the text and whether an escape
/// stopped it.
pub fn expand_backslashes(text: &str, meaning: impl Fn(char) -> Escape) -> (String, bool) {
    let mut out = String::new();
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(escaped) = chars.next() else {
            out.push('\\');
            break;
        };
        match meaning(escaped) {
            Escape::Char(meant) => out.push(meant),
            Escape::Stop => return (out, true),
            Escape::Unknown => {
                out.push('\\');
                out.push(escaped);
            }
        }
    }
    (out, false)
}
