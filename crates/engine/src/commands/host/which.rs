//! `which` (debianutils 5.5): where each program is on `$PATH`, from the
//! image's one table of install locations (`commands::install`). Builtins
//! and unknown names print nothing and make the status 1.

use crate::commands::{install, Command, Example, Flag, Invocation, Output, Signature};

pub struct Which;

static SIGNATURE: Signature = Signature {
    name: "which",
    summary: "locate a command",
    usage: "which [-as] args",
    flags: &[
        Flag { short: Some('a'), long: None, value: None, help: "print all matching pathnames of each argument" },
        Flag { short: Some('s'), long: None, value: None, help: "silently return 0 if all are found, 1 otherwise" },
    ],
    examples: &[Example { command: "which all_reduce_perf", description: "where the nccl-tests binaries are installed" }],
};

impl Command for Which {
    fn signature(&self) -> &'static Signature {
        &SIGNATURE
    }

    fn run(&self, invocation: &Invocation) -> Output {
        let mut all = false;
        let mut silent = false;
        let mut names = Vec::new();
        let mut options_done = false;
        for arg in invocation.args() {
            match arg.strip_prefix('-').filter(|flags| !options_done && !flags.is_empty()) {
                Some("-") => options_done = true,
                Some(flags) => {
                    for letter in flags.chars() {
                        match letter {
                            'a' => all = true,
                            's' => silent = true,
                            other => return Output::error(format!("Illegal option -{other}\nUsage: /usr/bin/which [-as] args\n"), 2),
                        }
                    }
                }
                None => {
                    options_done = true;
                    names.push(arg);
                }
            }
        }
        let search_path = invocation.env.get("PATH").map_or("", String::as_str);
        let mut output = Output::default();
        for name in names {
            let found: Vec<String> = if name.contains('/') {
                // A path names itself when it is an executable; /bin and
                // /sbin are /usr's (merged /usr).
                let program = name.rsplit('/').next().unwrap_or(name);
                let installed = install::path(program);
                let merged = installed.strip_prefix("/usr").is_some_and(|short| short == name);
                ((installed == *name || merged) && crate::commands::find(program).is_some()).then(|| name.clone()).into_iter().collect()
            } else if all {
                install::lookup_all(name, search_path)
            } else {
                install::lookup(name, search_path).into_iter().collect()
            };
            if found.is_empty() {
                output.status = 1;
            } else if !silent {
                output.stdout += &found.iter().map(|path| format!("{path}\n")).collect::<String>();
            }
        }
        if invocation.args().is_empty() {
            output.status = 1;
        }
        output
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::run_on_first_node;

    #[test]
    fn finds_programs_on_the_path() {
        assert_eq!(run_on_first_node("which nvidia-smi ibstat").stdout, "/usr/bin/nvidia-smi\n/usr/sbin/ibstat\n");
        assert_eq!(run_on_first_node("which -a ls").stdout, "/usr/bin/ls\n/bin/ls\n");
        assert_eq!(run_on_first_node("which /bin/ls /usr/sbin/ibstat /sbin/ibstat").stdout, "/bin/ls\n/usr/sbin/ibstat\n/sbin/ibstat\n");
        let out = run_on_first_node("which cd nosuch");
        assert_eq!((out.stdout.as_str(), out.status), ("", 1));
        assert_eq!(run_on_first_node("which -s ls").stdout, "");
        assert_eq!(run_on_first_node("which /usr/bin/ls").stdout, "/usr/bin/ls\n");
        let out = run_on_first_node("which -x ls");
        assert_eq!((out.stderr.as_str(), out.status), ("Illegal option -x\nUsage: /usr/bin/which [-as] args\n", 2));
        assert_eq!(run_on_first_node("PATH=/usr/bin which ibstat").status, 1);
    }
}
