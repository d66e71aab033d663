//! `column` (util-linux): lines into columns to the terminal's width (`-c`,
//! `COLUMNS`, 80), filled down (default) or across (`-x`), padded with tabs;
//! or, with `-t`, a table whose cells are split on `-s` characters
//! (blanks by default, runs merged) and joined by `-o` (two spaces).

use super::{read_inputs, Dialect, GnuTool, Opt, Parsed, COREUTILS};
use crate::commands::{Example, Flag, Invocation, Output, Signature};

pub struct Column;

static SIGNATURE: Signature = Signature {
    name: "column",
    summary: "columnate lists",
    usage: "column [options] [<file>...]",
    flags: &[
        Flag { short: Some('t'), long: Some("table"), value: None, help: "create a table" },
        Flag { short: Some('s'), long: Some("separator"), value: Some("<string>"), help: "possible table delimiters" },
        Flag { short: Some('o'), long: Some("output-separator"), value: Some("<string>"), help: "columns separator for table output (default is two spaces)" },
        Flag { short: Some('c'), long: Some("output-width"), value: Some("<width>"), help: "width of output in number of characters" },
        Flag { short: Some('x'), long: Some("fillrows"), value: None, help: "fill rows before columns" },
    ],
    examples: &[
        Example { command: "ibdev2netdev | column -t", description: "the device map as an aligned table" },
        Example { command: "cut -d, -f1,3 gpus.csv | column -t -s,", description: "a CSV file as a table" },
    ],
};

fn width_of(text: &str) -> usize {
    text.chars().count()
}

fn table(lines: &[&str], separators: &str, output: &str) -> String {
    let rows: Vec<Vec<&str>> = lines
        .iter()
        .filter(|line| !line.trim().is_empty())
        .map(|line| line.split(|c| separators.contains(c)).filter(|cell| !cell.is_empty()).collect())
        .collect();
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns).map(|c| rows.iter().filter_map(|row| row.get(c)).map(|cell| width_of(cell)).max().unwrap_or(0)).collect();
    let mut out = String::new();
    for row in &rows {
        // A short row's missing cells are empty: every column but the
        // table's last is still padded and separated.
        for (c, width) in widths.iter().enumerate() {
            let cell = row.get(c).copied().unwrap_or("");
            out.push_str(cell);
            if c + 1 < columns {
                out.push_str(&" ".repeat(width - width_of(cell)));
                out.push_str(output);
            }
        }
        out.push('\n');
    }
    out
}

/// Tabs from column `from` to `to` (a multiple of 8).
fn tab_to(out: &mut String, mut from: usize, to: usize) {
    while (from + 8) & !7 <= to {
        out.push('\t');
        from = (from + 8) & !7;
    }
}

fn columns(entries: &[&str], width: usize, across: bool) -> String {
    let longest = entries.iter().map(|e| width_of(e)).max().unwrap_or(0);
    let column = (longest + 8) & !7;
    let mut out = String::new();
    if width < column {
        for entry in entries {
            out.push_str(entry);
            out.push('\n');
        }
        return out;
    }
    let per_row = width / column;
    if across {
        let mut at_column = 0;
        for entry in entries {
            out.push_str(entry);
            at_column += 1;
            if at_column == per_row {
                out.push('\n');
                at_column = 0;
            } else {
                tab_to(&mut out, width_of(entry), column);
            }
        }
        if at_column != 0 {
            out.push('\n');
        }
        return out;
    }
    let rows = entries.len().div_ceil(per_row);
    for row in 0..rows {
        let mut position = 0;
        let mut end = column;
        let mut index = row;
        while let Some(entry) = entries.get(index) {
            out.push_str(entry);
            position += width_of(entry);
            index += rows;
            if index >= entries.len() {
                break;
            }
            tab_to(&mut out, position, end);
            position = end;
            end += column;
        }
        out.push('\n');
    }
    out
}

impl GnuTool for Column {
    const SIGNATURE: &'static Signature = &SIGNATURE;
    const DIALECT: &'static Dialect = &COREUTILS;

    fn run_parsed(&self, parsed: Parsed<'static>, invocation: &Invocation) -> Output {
        let (mut is_table, mut across) = (false, false);
        let (mut separators, mut output) = (" \t".to_string(), "  ".to_string());
        let mut width = invocation.env.get("COLUMNS").and_then(|c| c.parse::<usize>().ok()).filter(|w| *w > 0).unwrap_or(80);
        for option in &parsed.options {
            let Opt::Flag(flag, value) = option else { continue };
            let value = value.clone().unwrap_or_default();
            match flag.short {
                Some('t') => is_table = true,
                Some('x') => across = true,
                Some('s') => separators = value,
                Some('o') => output = value,
                Some('c') => match value.parse::<usize>() {
                    Ok(w) => width = w,
                    Err(_) => return Output::error(format!("column: invalid columns argument: '{value}'\n"), 1),
                },
                _ => {}
            }
        }
        let (text, errors) = read_inputs("column", &parsed.operands, invocation);
        let lines = super::lines(&text);
        let stdout = if is_table {
            table(&lines, &separators, &output)
        } else {
            let entries: Vec<&str> = lines.into_iter().filter(|line| !line.is_empty()).collect();
            columns(&entries, width, across)
        };
        Output { stdout, status: if errors.is_empty() { 0 } else { 1 }, stderr: errors, ..Output::default() }
    }
}

#[cfg(test)]
mod tests {
    use crate::commands::text::test_support::echo_into;

    #[test]
    fn tables_and_columns() {
        assert_eq!(echo_into("column", "a bb ccc\\ndddd e f\\n\\ng h", "-t").stdout, "a     bb  ccc\ndddd  e   f\ng     h   \n");
        assert_eq!(echo_into("column", "a:b:c\\nxx:y:zzz", "-t -s: -o ' | '").stdout, "a  | b | c\nxx | y | zzz\n");
        assert_eq!(echo_into("column", "1\\n2\\n3\\n4", "-c 20").stdout, "1\t3\n2\t4\n");
    }
}
