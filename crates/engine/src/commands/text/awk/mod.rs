//! `awk`: the subset of POSIX awk that operator one-liners use, with gawk's
//! messages and number output.
//!
//! Supported: `BEGIN`/`END`, pattern-action items (`/re/`, expressions),
//! `-F SEP`, `-v var=value`, fields (`$1`, `$NF`, assigning a field rebuilds
//! `$0`), `NR NF FS OFS ORS RS`, string concatenation, arithmetic, comparisons
//! (numeric for numeric-looking fields), `~ !~`, `&& || !`, `?:`, `++ --`,
//! compound assignment, arrays with `in` and `for (k in a)` (keys in
//! insertion order; gawk leaves this order unspecified), `if/else`, `while`,
//! `for(;;)`, `next`, `exit`, `delete`, `print`, `printf`, and the functions
//! `length substr index split tolower toupper int sprintf sub gsub match`.
//! Not supported (a syntax error here): user functions, `getline`, output
//! redirection to files and pipes. Any syntax error is answered in gawk's
//! shape: `awk: cmd. line:1: <program>` / `awk: cmd. line:1: ^ syntax error`,
//! exit 2 (the caret's column is approximate).

use std::collections::BTreeMap;

use super::regex::{Budget, Regex, Syntax};
use super::{usage_error, Dialect, GnuTool, Opt, Parsed};
use crate::commands::text::escapes::{expand_backslashes, Escape};
use crate::commands::{Example, Flag, Invocation, Output, Signature};

pub struct Awk;

static SIGNATURE: Signature = Signature {
    name: "awk",
    summary: "pattern scanning and processing language (a subset)",
    usage: "awk [-F fs] [-v var=value] 'program' [file ...]",
    flags: &[
        Flag { short: Some('F'), long: Some("field-separator"), value: Some("fs"), help: "use fs for the input field separator" },
        Flag { short: Some('v'), long: Some("assign"), value: Some("var=val"), help: "assign a variable before the program starts" },
    ],
    examples: &[
        Example { command: "nvidia-smi -L | awk '{print $2}'", description: "the second field of each line" },
        Example {
            command: "nvidia-smi --query-gpu=index,temperature.gpu --format=csv,noheader | awk -F', ' '$2 > 30 {print $1}'",
            description: "GPUs warmer than 30 C",
        },
        Example { command: "nvidia-smi -L | awk 'END {print NR}'", description: "count lines" },
    ],
};

const DIALECT: Dialect = Dialect { usage_status: 2, usage_line: None, numeric_option: false, optional_values: &[] };

/// Steps a program may take before it is stopped, so `while (1)` cannot hang the page.
const MAX_STEPS: u64 = crate::limits::MAX_AWK_STEPS;
/// The longest string or output a program may build (bytes).
const MAX_TEXT: usize = 4 << 20;

mod lexer;
mod machine;
mod syntax;
mod value;

use lexer::*;
use machine::*;
use syntax::*;
use value::*;

/// gawk's answer to a program it cannot parse.
fn syntax_error(program: &str) -> Output {
    let first_line = program.lines().next().unwrap_or("");
    let caret = " ".repeat(first_line.chars().count().saturating_sub(1));
    Output::error(format!("awk: cmd. line:1: {first_line}\nawk: cmd. line:1: {caret}^ syntax error\n"), 1)
}

/// A one-line program that ended before its syntax did (`BEGIN {`): gawk
/// points past its end.
fn unexpected_end(program: &str) -> Output {
    let caret = " ".repeat(program.chars().count());
    Output::error(format!("awk: cmd. line:1: {program}\nawk: cmd. line:1: {caret}^ unexpected newline or end of string\n"), 1)
}

/// Reads an escape-processed `-v`/operand assignment value, as awk does.
fn assignment_value(text: &str) -> String {
    let (value, _) = expand_backslashes(text, |escaped| match escaped {
        'n' => Escape::Char('\n'),
        't' => Escape::Char('\t'),
        '\\' => Escape::Char('\\'),
        _ => Escape::Unknown,
    });
    value
}

fn is_assignment(operand: &str) -> Option<(&str, &str)> {
    let (name, value) = operand.split_once('=')?;
    let valid = name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    valid.then_some((name, value))
}

impl GnuTool for Awk {
    const SIGNATURE: &'static Signature = &SIGNATURE;
    const DIALECT: &'static Dialect = &DIALECT;

    fn run_parsed(&self, parsed: Parsed<'static>, invocation: &Invocation) -> Output {
        let mut vars: BTreeMap<String, Value> = BTreeMap::new();
        for (name, value) in [("FS", " "), ("OFS", " "), ("ORS", "\n"), ("RS", "\n"), ("SUBSEP", "\x1c"), ("FILENAME", "")] {
            vars.insert(name.into(), Value::Str(value.into()));
        }
        vars.insert("NR".into(), Value::Num(0.0));
        vars.insert("NF".into(), Value::Num(0.0));
        vars.insert("FNR".into(), Value::Num(0.0));
        for option in &parsed.options {
            let Opt::Flag(flag, Some(value)) = option else { continue };
            match flag.short {
                Some('F') => {
                    // `-Ft` is a tab, as in POSIX awk.
                    let separator = if value == "t" { "\t".to_string() } else { assignment_value(value) };
                    vars.insert("FS".into(), Value::Str(separator));
                }
                _ => match is_assignment(value) {
                    Some((name, text)) => {
                        vars.insert(name.into(), Value::StrNum(assignment_value(text)));
                    }
                    None => return Output::error(format!("awk: `{value}' argument to `-v' not in `var=value' form\n\n{}", SIGNATURE.usage), 2),
                },
            }
        }
        let mut operands = parsed.operands.into_iter();
        let Some(source) = operands.next() else {
            return usage_error("awk", &DIALECT, "").with_stderr(format!("Usage: {}\n", SIGNATURE.usage));
        };
        let Ok(tokens) = tokenize(&source) else { return syntax_error(&source) };
        let mut parser = Parser { tokens, at: 0, depth: 0, too_deep: false };
        let Ok(program) = parser.program() else {
            if parser.too_deep {
                // gawk's parser gives up the same way on its stack's end.
                return Output::error(format!("awk: cmd. line:1: fatal: program nested too deeply (at most {} levels)\n", crate::limits::MAX_SYNTAX_DEPTH), 2);
            }
            if *parser.peek() == Tok::Eof && !source.contains('\n') {
                return unexpected_end(&source);
            }
            return syntax_error(&source);
        };

        let mut machine = Machine {
            vars,
            arrays: BTreeMap::new(),
            fields: Vec::new(),
            record: String::new(),
            out: String::new(),
            steps: 0,
            work: 0,
            exit_status: 0,
            regexes: BTreeMap::new(),
            budget: Budget::default(),
            error: None,
            input: Vec::new(),
            next_record: 0,
            ranges: vec![false; program.len()],
            _program: &program,
        };
        // Operands: assignments apply in order; files are read from the node
        // (their records run on as one input).
        let mut stderr = String::new();
        let mut read_stdin = true;
        let mut deferred_assignments = Vec::new();
        let mut input: Option<String> = None;
        for operand in operands {
            if let Some((name, value)) = is_assignment(&operand) {
                deferred_assignments.push((name.to_string(), value.to_string()));
            } else if operand == "-" {
                input.get_or_insert_with(String::new).push_str(invocation.stdin);
            } else {
                match super::read_file(invocation, &operand) {
                    Ok(text) => input.get_or_insert_with(String::new).push_str(&text),
                    Err(reason) => {
                        read_stdin = false;
                        stderr.push_str(&format!("awk: fatal: cannot open file `{operand}' for reading: {reason}\n"));
                        break;
                    }
                }
            }
        }
        if read_stdin {
            machine.input = super::lines(input.as_deref().unwrap_or(invocation.stdin)).into_iter().map(str::to_string).collect();
        }
        let finish = |machine: &Machine, stderr: String| Output {
            stdout: machine.out.clone(),
            stderr: stderr + machine.error.as_deref().unwrap_or(""),
            status: if machine.error.is_some() { 2 } else { machine.exit_status },
            duration_ms: 0,
            ..Output::default()
        };

        let mut exiting = false;
        for item in program.iter().filter(|item| matches!(item.pattern, Pattern::Begin)) {
            match machine.run_all(item.action.as_deref().unwrap_or(&[])) {
                Err(()) => return finish(&machine, stderr),
                Ok(Flow::Exit) => {
                    exiting = true;
                    break;
                }
                Ok(_) => {}
            }
        }
        if !stderr.is_empty() {
            return Output { status: 2, ..finish(&machine, stderr) };
        }
        for (name, value) in deferred_assignments {
            machine.set_var(&name, Value::StrNum(assignment_value(&value)));
        }
        let has_main = program.iter().any(|item| matches!(item.pattern, Pattern::All | Pattern::Expr(_) | Pattern::Range(..)));
        let has_end = program.iter().any(|item| matches!(item.pattern, Pattern::End));
        if !exiting && read_stdin && (has_main || has_end) {
            'records: while let Some(record) = machine.next_input() {
                machine.record = record;
                machine.split_record();
                for (index, item) in program.iter().enumerate() {
                    let selected = match &item.pattern {
                        Pattern::Begin | Pattern::End => continue,
                        Pattern::All => true,
                        Pattern::Expr(expr) => match machine.eval(expr) {
                            Ok(value) => value.truthy(),
                            Err(()) => return finish(&machine, stderr),
                        },
                        Pattern::Range(from, to) => match machine.in_range(index, from, to) {
                            Ok(selected) => selected,
                            Err(()) => return finish(&machine, stderr),
                        },
                    };
                    if !selected {
                        continue;
                    }
                    let flow = match &item.action {
                        None => machine.exec(&Stmt::Print(Vec::new())),
                        Some(statements) => machine.run_all(statements),
                    };
                    match flow {
                        Err(()) => return finish(&machine, stderr),
                        Ok(Flow::Next) => continue 'records,
                        Ok(Flow::Exit) => {
                            exiting = true;
                            break 'records;
                        }
                        Ok(_) => {}
                    }
                }
            }
        }
        let _ = exiting;
        // END runs after `exit` in the main loop too, as in awk.
        for item in program.iter().filter(|item| matches!(item.pattern, Pattern::End)) {
            match machine.run_all(item.action.as_deref().unwrap_or(&[])) {
                Err(()) => return finish(&machine, stderr),
                Ok(Flow::Exit) => break,
                Ok(_) => {}
            }
        }
        finish(&machine, stderr)
    }
}

trait WithStderr {
    fn with_stderr(self, stderr: String) -> Output;
}

impl WithStderr for Output {
    fn with_stderr(self, stderr: String) -> Output {
        Output { stderr, ..self }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::text::test_support::{echo_into, shown};
    use crate::testing::run_on_first_node;

    fn awk(input: &str, program: &str) -> String {
        shown(echo_into("awk", input, program))
    }

    #[test]
    fn one_liners() {
        assert_eq!(awk("a b c\\nd e f", "'{print $1}'"), "a\nd\n");
        assert_eq!(awk("a b c", "'{print $1, $NF}'"), "a c\n");
        assert_eq!(awk("a:b", "-F: '{print $2}'"), "b\n");
        assert_eq!(awk("x 1\\ny 200", "'$2 > 100 {print}'"), "y 200\n");
        assert_eq!(awk("x 1\\ny 200", "'NR==2'"), "y 200\n");
        assert_eq!(awk("x 1\\ny 200", "'/x/ {print $2}'"), "1\n");
        assert_eq!(awk("a b\\nc", "'{print NF}'"), "2\n1\n");
        assert_eq!(awk("a b", "'{print $1 \"-\" $2}'"), "a-b\n");
        assert_eq!(awk("1\\n2\\n3", "'{s += $1} END {print s, NR}'"), "6 3\n");
        assert_eq!(awk("a\\nb\\na", "'{c[$1]++} END {for (k in c) print k, c[k]}'"), "a 2\nb 1\n");
        assert_eq!(awk("3.14159", "'{printf \"%.2f|%5s|%-3d|\\n\", $1, \"ab\", 7}'"), "3.14|   ab|7  |\n");
        assert_eq!(awk("x", "'BEGIN {print 0.1+0.2, 1e6, 3/2, 100000*100000}'"), "0.3 1000000 1.5 10000000000\n");
        assert_eq!(awk("GPU 0: H100", "'{sub(/GPU /, \"g\"); print}'"), "g0: H100\n");
        assert_eq!(awk("a,b,,c", "-F, '{print NF, $3 == \"\"}'"), "4 1\n");
        assert_eq!(awk("10 9", "'{print ($1 > $2), (\"10\" > \"9\")}'"), "1 0\n");
    }

    #[test]
    fn errors_like_gawk() {
        assert_eq!(awk("x", "'{print $1'"), "awk: cmd. line:1: {print $1\nawk: cmd. line:1:          ^ unexpected newline or end of string\n");
        assert_eq!(run_on_first_node("echo | awk '{print'").status, 1, "gawk's status for a syntax error");
        assert_eq!(run_on_first_node("echo | awk 'BEGIN { while (1) x++ }'").status, 2);
        assert_eq!(run_on_first_node("echo | awk 'BEGIN { x = \"ab\"; while (1) x = x x }'").status, 2);
        assert!(awk("x", "1 nofile").contains("cannot open file `nofile'"));
    }

    #[test]
    fn formats_numbers_like_c() {
        assert_eq!(format_g(0.000012345, 6, false), "1.2345e-05");
        assert_eq!(format_g(123456789.0, 6, false), "1.23457e+08");
        assert_eq!(format_g(2.5, 6, false), "2.5");
        assert_eq!(sprintf("%05d|%x|%c|%%", &[Value::Num(42.0), Value::Num(255.0), Value::Str("hi".into())]), "00042|ff|h|%");
    }

    proptest::proptest! {
        #[test]
        fn arbitrary_programs_never_panic(pieces in proptest::collection::vec(proptest::sample::select(vec![
            "{", "}", "(", ")", "[", "]", "$", "1", "NF", "NR", "print", "printf", "\"%5.2f%s%d\"", ",", ";", "+", "-", "/", "%", "^",
            "==", ">", "<", "~", "/a/", "x", "a[x]", "++", "--", "=", "+=", "in", "for", "if", "else", "while", "next", "exit",
            "substr(", "split(", "gsub(", "length", "?", ":", "!", "&&", "||", "\"s\"", " ", "\n", "BEGIN", "END", "0",
        ]), 0..14)) {
            let program = pieces.concat();
            let quoted = program.replace('\'', "");
            let _ = run_on_first_node(&format!("echo -e 'a b 3\\nc d 4' | awk '{quoted}'"));
        }
    }
}
