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

mod run;
mod script;

use run::*;
use script::*;

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
