//! `man CMD`: a manual page generated from the command's `Signature`
//! (NAME, SYNOPSIS, DESCRIPTION, OPTIONS, EXAMPLES), laid out as man(1)
//! formats a page for an 80-column terminal.

use crate::commands::{Command, Example, Invocation, Output, Signature};

pub struct Man;

static SIGNATURE: Signature = Signature {
    name: "man",
    summary: "an interface to the system reference manuals",
    usage: "man [SECTION] PAGE...",
    flags: &[],
    examples: &[Example { command: "man nvidia-smi", description: "the manual page of nvidia-smi" }],
};

/// The page for one command.
pub fn page(signature: &Signature) -> String {
    let name = signature.name;
    let title = format!("{}(1)", name.to_ascii_uppercase());
    let middle = "User Commands";
    let gap = 80usize.saturating_sub(title.len() * 2 + middle.len());
    let left = gap / 2;
    let mut out = format!("{title}{}{middle}{}{title}\n\n", " ".repeat(left), " ".repeat(gap - left));
    out += &format!("NAME\n       {name} - {}\n\nSYNOPSIS\n", signature.summary);
    for line in signature.usage.lines() {
        out += &format!("       {}\n", line.trim_start());
    }
    if !signature.flags.is_empty() {
        out += "\nOPTIONS\n";
        for flag in signature.flags {
            out += &format!("       {}\n              {}\n\n", flag.display(), flag.help);
        }
        out.pop();
    }
    if !signature.examples.is_empty() {
        out += "\nEXAMPLES\n";
        for example in signature.examples {
            out += &format!("       {}\n              {}\n\n", example.command, example.description);
        }
        out.pop();
    }
    out += &format!("\nClusterLab{}{title}\n", " ".repeat(80usize.saturating_sub(10 + title.len())));
    out
}

impl Command for Man {
    fn signature(&self) -> &'static Signature {
        &SIGNATURE
    }

    fn run(&self, invocation: &Invocation) -> Output {
        let pages: Vec<&String> = invocation.args().iter().filter(|arg| !arg.starts_with('-') && !arg.chars().all(|c| c.is_ascii_digit())).collect();
        if pages.is_empty() {
            return Output::error("What manual page do you want?\nFor example, try 'man man'.\n", 1);
        }
        let (mut stdout, mut stderr) = (String::new(), String::new());
        for name in pages {
            match crate::commands::find(name) {
                Some(command) => stdout += &page(command.signature()),
                None => stderr += &format!("No manual entry for {name}\n"),
            }
        }
        let status = if stderr.is_empty() { 0 } else { 16 };
        // man shows its pages through less, as on a terminal it does.
        Output { stdout, stderr, status, pager: Some(crate::commands::Pager::Less { quit_if_one_screen: false, at_end: false }), ..Output::default() }
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::run_on_first_node;

    #[test]
    fn pages_come_from_signatures() {
        let out = run_on_first_node("man free").stdout;
        assert!(
            out.starts_with("FREE(1)                          User Commands                           FREE(1)\n\nNAME\n       free - display amount"),
            "{out}"
        );
        assert_eq!(out.lines().next().unwrap().len(), 80);
        assert!(out.contains("\nOPTIONS\n       -b, --bytes\n") && out.contains("\n       -h, --human\n              show human-readable output\n"));
        assert!(out.contains("\nEXAMPLES\n       free -g\n"));
        let out = run_on_first_node("man nosuch");
        assert_eq!((out.stderr.as_str(), out.status), ("No manual entry for nosuch\n", 16));
        assert_eq!(run_on_first_node("man").status, 1);
    }
}
