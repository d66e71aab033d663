//! Expansion as bash does it: braces, tilde, parameters, command and
//! process substitution, arithmetic, field splitting and globbing, each
//! bounded by the line's work budget.

use super::*;

impl<'c, 's> Interp<'c, 's> {
    /// Expands words into fields, as bash does for a command's words.
    /// None after an expansion error (already printed, status set).
    pub fn expand_words(&mut self, words: &[Word], out: &mut Transcript) -> Option<Vec<String>> {
        let mut fields = Vec::new();
        for word in words {
            for word in self.brace_expand(word, out)? {
                if let Some(matches) = self.glob(&word, out)? {
                    fields.extend(matches);
                    continue;
                }
                self.expand_fields(&word, out, &mut fields)?;
            }
        }
        Some(fields)
    }

    /// Pathname expansion: a word whose unquoted text has `*`, `?` or `[`
    /// becomes the node's paths it matches, sorted; None when it has no
    /// pattern or matches nothing (bash then keeps the word as it is).
    pub(super) fn glob(&mut self, word: &Word, out: &mut Transcript) -> Option<Option<Vec<String>>> {
        let has_pattern = word.parts.iter().any(|part| matches!(part, Part::Literal { text, quoted: false } if text.contains(['*', '?', '['])));
        if !has_pattern {
            return Some(None);
        }
        let pattern = self.expand_pattern(word, out)?;
        let view = self.file_view();
        let absolute = pattern.starts_with('/');
        // Candidates grow one path component at a time; each step is bounded.
        let mut found: Vec<String> = vec![if absolute { "/".to_string() } else { String::new() }];
        let mut listings = 0u64;
        for component in pattern.split('/').filter(|c| !c.is_empty()) {
            let mut next = Vec::new();
            for base in &found {
                let dir = if base.is_empty() { "." } else { base.as_str() };
                let join = |name: &str| match base.as_str() {
                    "" => name.to_string(),
                    "/" => format!("/{name}"),
                    base => format!("{base}/{name}"),
                };
                if !component.contains(['*', '?', '[']) {
                    let literal = component.replace('\\', "");
                    let path = join(&literal);
                    if view.kind(&path).is_some() {
                        next.push(path);
                    }
                    continue;
                }
                listings += 1;
                for (name, _) in view.list(dir).unwrap_or_default() {
                    // A leading dot is matched only by a pattern that starts with one.
                    if name.starts_with('.') && !component.starts_with('.') {
                        continue;
                    }
                    if pattern::matches(component, &name) {
                        next.push(join(&name));
                    }
                }
                if next.len() > MAX_BRACE_WORDS {
                    break;
                }
            }
            found = next;
        }
        // Each directory read counts against the line's command bound.
        self.commands_run.add(listings.saturating_sub(1));
        if !self.count_command(out) {
            return None;
        }
        found.truncate(MAX_BRACE_WORDS);
        crate::sort::sort(&mut found);
        Some((!found.is_empty() && found != [String::from("/")]).then_some(found))
    }

    /// Brace expansion of a word's unquoted text: `gpu-00{1..8}`, `mlx5_{0,1}`.
    pub(super) fn brace_expand(&mut self, word: &Word, out: &mut Transcript) -> Option<Vec<Word>> {
        let has_brace = word.parts.iter().any(|part| matches!(part, Part::Literal { text, quoted: false } if text.contains('{')));
        if !has_brace {
            return Some(vec![word.clone()]);
        }
        let pieces = braces::pieces(word);
        match braces::expand(&pieces, MAX_BRACE_WORDS) {
            Ok(expanded) => Some(expanded.into_iter().map(|pieces| braces::word(pieces, word.quoted)).collect()),
            Err(()) => {
                self.emit(out, Stream::Stderr, format!("-bash: brace expansion: a simulated command line makes at most {MAX_BRACE_WORDS} words from braces\n"));
                self.shell.last_status = 1;
                None
            }
        }
    }

    pub(super) fn expand_fields(&mut self, word: &Word, out: &mut Transcript, fields: &mut Vec<String>) -> Option<()> {
        // `"$@"` alone: one field per positional parameter, none when there are none.
        if let [Part::Parameter { name, quoted: true, op: None }] = word.parts.as_slice() {
            if name == "@" {
                fields.extend(self.positional.iter().cloned());
                return Some(());
            }
        }
        let mut current: Vec<String> = vec![String::new()];
        let mut has_text = word.quoted;
        for (at, part) in word.parts.iter().enumerate() {
            match part {
                Part::Literal { text, quoted } => {
                    let text = if at == 0 && !quoted { self.tilde(text) } else { text.clone() };
                    current.last_mut().expect("never empty").push_str(&text);
                    has_text = true;
                }
                Part::Parameter { name, quoted: true, op: None } if name == "@" => {
                    for (index, value) in self.positional.clone().into_iter().enumerate() {
                        if index > 0 {
                            current.push(String::new());
                        }
                        current.last_mut().expect("never empty").push_str(&value);
                    }
                }
                _ => {
                    let quoted = part_quoted(part);
                    let value = self.part_value(part, out)?;
                    if quoted {
                        current.last_mut().expect("never empty").push_str(&value);
                        continue;
                    }
                    // Unquoted: split on blanks, so `$A` holding "x y" gives two words.
                    for (index, piece) in value.split([' ', '\t', '\n']).enumerate() {
                        if index > 0 {
                            current.push(String::new());
                        }
                        current.last_mut().expect("never empty").push_str(piece);
                        has_text |= !piece.is_empty();
                    }
                }
            }
        }
        for field in &current {
            if !self.charge(field.len(), out) {
                return None;
            }
        }
        if has_text {
            fields.extend(current.into_iter().filter(|f| !f.is_empty() || word.quoted));
        }
        Some(())
    }

    /// `~` and `~/...` at the start of a word: the home directory.
    pub(super) fn tilde(&self, text: &str) -> String {
        match text.strip_prefix('~') {
            Some(rest) if rest.is_empty() || rest.starts_with('/') => {
                format!("{}{rest}", self.shell.env.get("HOME").map_or(crate::model::node::HOME, String::as_str))
            }
            _ => text.to_string(),
        }
    }

    /// Counts bytes built by expansion against the line's bounds.
    pub(super) fn charge(&mut self, bytes: usize, out: &mut Transcript) -> bool {
        self.work = self.work.saturating_add(bytes as u64);
        if bytes > MAX_WORD_BYTES {
            self.emit(out, Stream::Stderr, format!("-bash: expansion too long: a simulated shell builds words of at most {} MiB\n", MAX_WORD_BYTES >> 20));
            self.shell.last_status = 1;
            return false;
        }
        if self.work > MAX_SHELL_WORK_BYTES {
            self.stop_line(out, "-bash: this command line expanded more text than a simulated line may; it was stopped\n".into());
            return false;
        }
        true
    }

    /// A word as one string: no splitting, no braces (assignment values,
    /// `case` subjects, redirection targets, `[[ ]]` operands).
    pub(super) fn expand_text(&mut self, word: &Word, out: &mut Transcript) -> Option<String> {
        let mut text = String::new();
        for (at, part) in word.parts.iter().enumerate() {
            match part {
                Part::Literal { text: literal, quoted } if at == 0 && !quoted => text.push_str(&self.tilde(literal)),
                Part::Literal { text: literal, .. } => text.push_str(literal),
                _ => {
                    let value = self.part_value(part, out)?;
                    text.push_str(&value);
                }
            }
        }
        self.charge(text.len(), out).then_some(text)
    }

    /// The value of `NAME=value` (after `skip` characters of the word).
    pub(super) fn expand_assignment_value(&mut self, word: &Word, skip: usize, out: &mut Transcript) -> Option<String> {
        let mut rest = word.clone();
        if let Some(Part::Literal { text, .. }) = rest.parts.first_mut() {
            *text = text[skip..].to_string();
        }
        self.expand_text(&rest, out)
    }

    /// A word as a pattern: quoted characters escaped, so they match themselves.
    pub(super) fn expand_pattern(&mut self, word: &Word, out: &mut Transcript) -> Option<String> {
        let mut text = String::new();
        for (at, part) in word.parts.iter().enumerate() {
            match part {
                Part::Literal { text: literal, quoted: false } if at == 0 => text.push_str(&self.tilde(literal)),
                Part::Literal { text: literal, quoted: false } => text.push_str(literal),
                Part::Literal { text: literal, quoted: true } => text.push_str(&escape_pattern(literal)),
                _ => {
                    let value = self.part_value(part, out)?;
                    if part_quoted(part) {
                        text.push_str(&escape_pattern(&value));
                    } else {
                        text.push_str(&value);
                    }
                }
            }
        }
        self.charge(text.len(), out).then_some(text)
    }

    pub(super) fn arithmetic(&mut self, expression: &Word, out: &mut Transcript) -> Option<i64> {
        let text = self.expand_text(expression, out)?;
        let mut variables = ArithVariables { interp: self, failed: false };
        let result = arith::evaluate(&text, &mut variables);
        let failed = variables.failed;
        match result {
            Ok(value) if !failed => Some(value),
            Ok(_) => None,
            Err(error) => {
                self.emit(out, Stream::Stderr, format!("-bash: {}\n", error.0));
                self.shell.last_status = 1;
                None
            }
        }
    }

    /// Runs the list of `$(...)` or `<(...)` in a subshell, one level
    /// deeper, with no standard input: its standard output and status.
    pub(super) fn run_substituted(&mut self, list: &List, out: &mut Transcript) -> Option<(String, i32)> {
        if !self.enter(out, "") {
            return None;
        }
        let captured = self.capture(out, &mut |interp, sub| {
            let mut none = Input::default();
            interp.subshell(sub, &mut |interp, sub| interp.run_list(list, &mut none, sub))
        });
        self.depth -= 1;
        Some(captured)
    }

    /// The value of a parameter, command substitution or arithmetic part.
    pub(super) fn part_value(&mut self, part: &Part, out: &mut Transcript) -> Option<String> {
        match part {
            Part::Literal { text, .. } => Some(text.clone()),
            Part::Parameter { name, op, .. } => self.parameter_value(name, op.as_deref(), out),
            Part::Command { list, .. } => {
                let (mut stdout, status) = self.run_substituted(list, out)?;
                self.substitution_status = Some(status);
                self.shell.last_status = status;
                let trimmed = stdout.trim_end_matches('\n').len();
                stdout.truncate(trimmed);
                Some(stdout)
            }
            Part::Arithmetic { expression, .. } => self.arithmetic(expression, out).map(|value| value.to_string()),
            Part::Process { list } => {
                let (stdout, _) = self.run_substituted(list, out)?;
                // bash hands the command /dev/fd/63, then 62, ...: a pipe the
                // command reads. Here it is a file, gone when the command ends.
                let path = format!("/dev/fd/{}", 63usize.saturating_sub(self.process_files.len()));
                let host = self.shell.host.clone();
                if let Some(node) = self.cluster.to_mut().node_mut(&host) {
                    node.files.insert(path.clone(), stdout);
                }
                self.process_files.push(path.clone());
                Some(path)
            }
        }
    }

    pub(super) fn parameter(&self, name: &str) -> Option<String> {
        match name {
            "?" => Some(self.shell.last_status.to_string()),
            "$" => Some("4242".to_string()),
            "#" => Some(self.positional.len().to_string()),
            "0" => Some(self.arg0.clone()),
            "@" | "*" => Some(self.positional.join(" ")),
            "-" => Some("himBHs".to_string()),
            "!" => Some(String::new()),
            "EUID" | "UID" => Some(self.shell.env.get("EUID").cloned().unwrap_or_else(|| "1000".to_string())),
            digits if digits.chars().all(|c| c.is_ascii_digit()) => digits.parse::<usize>().ok().and_then(|n| self.positional.get(n.checked_sub(1)?)).cloned(),
            _ => self.shell.env.get(name).cloned(),
        }
    }

    pub(super) fn parameter_value(&mut self, name: &str, op: Option<&ParamOp>, out: &mut Transcript) -> Option<String> {
        let value = self.parameter(name);
        let Some(op) = op else {
            return Some(value.unwrap_or_default());
        };
        let unset_or_null = |colon: bool, value: &Option<String>| value.is_none() || (colon && value.as_deref() == Some(""));
        Some(match op {
            ParamOp::Length => match name {
                "@" | "*" => self.positional.len().to_string(),
                _ => value.unwrap_or_default().chars().count().to_string(),
            },
            ParamOp::Default { colon, word } => match unset_or_null(*colon, &value) {
                true => self.expand_text(word, out)?,
                false => value.unwrap_or_default(),
            },
            ParamOp::Assign { colon, word } => match unset_or_null(*colon, &value) {
                true => {
                    let new = self.expand_text(word, out)?;
                    if !parse::is_name(name) {
                        self.emit(out, Stream::Stderr, format!("-bash: ${name}: cannot assign in this way\n"));
                        self.shell.last_status = 1;
                        return None;
                    }
                    if !self.assign(name, new.clone(), out) {
                        return None;
                    }
                    new
                }
                false => value.unwrap_or_default(),
            },
            ParamOp::Alternative { colon, word } => match unset_or_null(*colon, &value) {
                true => String::new(),
                false => self.expand_text(word, out)?,
            },
            ParamOp::Error { colon, word } => match unset_or_null(*colon, &value) {
                true => {
                    let message = self.expand_text(word, out)?;
                    let message = if message.is_empty() { "parameter null or not set".to_string() } else { message };
                    self.emit(out, Stream::Stderr, format!("-bash: {name}: {message}\n"));
                    self.shell.last_status = 1;
                    return None;
                }
                false => value.unwrap_or_default(),
            },
            ParamOp::TrimPrefix { longest, pattern } => {
                let pattern = self.expand_pattern(pattern, out)?;
                pattern::trim(&value.unwrap_or_default(), &pattern, false, *longest)
            }
            ParamOp::TrimSuffix { longest, pattern } => {
                let pattern = self.expand_pattern(pattern, out)?;
                pattern::trim(&value.unwrap_or_default(), &pattern, true, *longest)
            }
            ParamOp::Replace { all, pattern, replacement } => {
                let pattern = self.expand_pattern(pattern, out)?;
                let replacement = self.expand_text(replacement, out)?;
                let result = pattern::replace(&value.unwrap_or_default(), &pattern, &replacement, *all);
                if !self.charge(result.len(), out) {
                    return None;
                }
                result
            }
        })
    }
}

/// The name of an assignment word (`NAME=...`, the `=` unquoted).
pub(super) fn assignment_name(word: &Word) -> Option<String> {
    let Some(Part::Literal { text, quoted: false }) = word.parts.first() else {
        return None;
    };
    let (name, _) = text.split_once('=')?;
    parse::is_name(name).then(|| name.to_string())
}

pub(super) fn part_quoted(part: &Part) -> bool {
    match part {
        Part::Literal { quoted, .. } | Part::Parameter { quoted, .. } | Part::Command { quoted, .. } | Part::Arithmetic { quoted, .. } => *quoted,
        Part::Process { .. } => true,
    }
}

/// The text a pattern matches literally (its escapes removed).
pub(super) fn unescape_pattern(pattern: &str) -> String {
    let mut text = String::with_capacity(pattern.len());
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => text.extend(chars.next()),
            c => text.push(c),
        }
    }
    text
}

pub(super) fn escape_pattern(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '\\') {
            escaped.push('\\');
        }
        escaped.push(c);
    }
    escaped
}

/// The shell's variables as arithmetic sees them.
pub(super) struct ArithVariables<'i, 'c, 's> {
    interp: &'i mut Interp<'c, 's>,
    failed: bool,
}

impl arith::Variables for ArithVariables<'_, '_, '_> {
    fn get(&self, name: &str) -> Option<String> {
        self.interp.parameter(name)
    }

    fn set(&mut self, name: &str, value: String) {
        let mut sink = Transcript::default();
        if !self.interp.assign(name, value, &mut sink) {
            self.failed = true;
        }
    }
}

/// Brace expansion over a word's pieces: characters of unquoted text, and
/// every other part kept whole.
pub(super) mod braces {
    use super::{Part, Word};

    #[derive(Clone, Debug)]
    pub enum Piece {
        Char(char),
        Part(Part),
    }

    pub fn pieces(word: &Word) -> Vec<Piece> {
        let mut pieces = Vec::new();
        for part in &word.parts {
            match part {
                Part::Literal { text, quoted: false } => pieces.extend(text.chars().map(Piece::Char)),
                other => pieces.push(Piece::Part(other.clone())),
            }
        }
        pieces
    }

    pub fn word(pieces: Vec<Piece>, quoted: bool) -> Word {
        let mut word = Word { parts: Vec::new(), quoted };
        let mut literal = String::new();
        for piece in pieces {
            match piece {
                Piece::Char(c) => literal.push(c),
                Piece::Part(part) => {
                    if !literal.is_empty() {
                        word.parts.push(Part::Literal { text: std::mem::take(&mut literal), quoted: false });
                    }
                    word.parts.push(part);
                }
            }
        }
        if !literal.is_empty() {
            word.parts.push(Part::Literal { text: literal, quoted: false });
        }
        word
    }

    /// Every word the braces make, left to right; Err past `limit` words
    /// (or when the words would hold more than `limit` times 64 pieces).
    pub fn expand(pieces: &[Piece], limit: usize) -> Result<Vec<Vec<Piece>>, ()> {
        let mut done = Vec::new();
        let mut budget = limit.saturating_mul(64);
        // Work list of (pieces, where to look for the next brace), so that
        // nesting costs no stack.
        let mut pending = vec![(pieces.to_vec(), 0usize)];
        while let Some((pieces, from)) = pending.pop() {
            match find(&pieces, from)? {
                None => {
                    done.push(pieces);
                    if done.len() > limit {
                        return Err(());
                    }
                }
                Some((open, close, alternatives)) => {
                    if alternatives.len().saturating_add(done.len()).saturating_add(pending.len()) > limit {
                        return Err(());
                    }
                    // Pushed in reverse so they come out in order.
                    for alternative in alternatives.into_iter().rev() {
                        let mut next = pieces[..open].to_vec();
                        next.extend(alternative);
                        next.extend_from_slice(&pieces[close + 1..]);
                        budget = budget.checked_sub(next.len()).ok_or(())?;
                        pending.push((next, open));
                    }
                }
            }
        }
        Ok(done)
    }

    fn is(piece: &Piece, c: char) -> bool {
        matches!(piece, Piece::Char(d) if *d == c)
    }

    /// The first brace from `from` that expands: (open, close, alternatives);
    /// Err for a sequence of more words than a line may make. One pass pairs
    /// every brace and finds its top-level commas, so a word of many
    /// unclosed braces costs linear time.
    fn find(pieces: &[Piece], from: usize) -> Result<Option<(usize, usize, Vec<Vec<Piece>>)>, ()> {
        // For each open brace (by position): its close and its commas.
        let mut pairs: Vec<(usize, Option<usize>, Vec<usize>)> = Vec::new();
        let mut open_stack: Vec<usize> = Vec::new();
        for (at, piece) in pieces.iter().enumerate().skip(from) {
            if is(piece, '{') && !(at > 0 && is(&pieces[at - 1], '$')) {
                open_stack.push(pairs.len());
                pairs.push((at, None, Vec::new()));
            } else if is(piece, '}') {
                if let Some(index) = open_stack.pop() {
                    pairs[index].1 = Some(at);
                }
            } else if is(piece, ',') {
                if let Some(&index) = open_stack.last() {
                    pairs[index].2.push(at);
                }
            }
        }
        for (open, close, commas) in pairs {
            let Some(close) = close else { continue };
            if !commas.is_empty() {
                let mut alternatives = Vec::new();
                let mut start = open + 1;
                for comma in commas.into_iter().chain(std::iter::once(close)) {
                    alternatives.push(pieces[start..comma].to_vec());
                    start = comma + 1;
                }
                return Ok(Some((open, close, alternatives)));
            }
            if let Some(sequence) = sequence(&pieces[open + 1..close]) {
                return sequence.map(|words| Some((open, close, words)));
            }
        }
        Ok(None)
    }

    /// `{a..e}`, `{1..10}`, `{01..10..2}`; None when the text is no sequence
    /// (then the braces stay as they are); Some(Err) past the word limit.
    fn sequence(inner: &[Piece]) -> Option<Result<Vec<Vec<Piece>>, ()>> {
        let text: String = inner
            .iter()
            .map(|piece| match piece {
                Piece::Char(c) => Some(*c),
                Piece::Part(_) => None,
            })
            .collect::<Option<String>>()?;
        let fields: Vec<&str> = text.split("..").collect();
        let (start, end, step) = match fields[..] {
            [start, end] => (start, end, None),
            [start, end, step] => (start, end, Some(step.parse::<i64>().ok()?)),
            _ => return None,
        };
        let step = step.map(i64::unsigned_abs).filter(|s| *s > 0).unwrap_or(1);
        let to_pieces = |text: String| text.chars().map(Piece::Char).collect::<Vec<_>>();
        if let (Ok(a), Ok(b)) = (start.parse::<i64>(), end.parse::<i64>()) {
            let width = [start, end]
                .iter()
                .filter(|s| s.trim_start_matches('-').len() > 1 && s.trim_start_matches('-').starts_with('0'))
                .map(|s| s.len())
                .max()
                .unwrap_or(0);
            let count = a.abs_diff(b) / step + 1;
            if count > super::MAX_BRACE_WORDS as u64 {
                return Some(Err(()));
            }
            let mut values = Vec::new();
            for index in 0..count {
                // Within a..=b, so no step overflows.
                let offset = (index * step) as i64;
                let value = if a <= b { a.wrapping_add(offset) } else { a.wrapping_sub(offset) };
                values.push(to_pieces(format!("{value:0width$}")));
            }
            return Some(Ok(values));
        }
        let (mut a, mut b) = (start.chars(), end.chars());
        let (Some(a), None, Some(b), None) = (a.next(), a.next(), b.next(), b.next()) else {
            return None;
        };
        if !a.is_ascii_alphabetic() || !b.is_ascii_alphabetic() {
            return None;
        }
        let (a, b) = (a as u32, b as u32);
        let count = a.abs_diff(b) as u64 / step + 1;
        Some(Ok((0..count)
            .filter_map(|index| {
                let offset = (index * step) as u32;
                char::from_u32(if a <= b { a + offset } else { a - offset })
            })
            .map(|c| vec![Piece::Char(c)])
            .collect()))
    }
}
