//! `whoami`, `id` and `groups` (GNU coreutils 8.32): who a command runs as.
//! The lab's user is `user` (uid 1000, in `adm` and `sudo`,
//! `model::node::GROUPS`); under `sudo` a command runs as root.

use crate::commands::options::{getopt, getopt_without_operands, quote, usage_error, Opt, COREUTILS};
use crate::commands::{is_root, Command, Example, Flag, Invocation, Output, Signature};
use crate::model::node::{GROUPS, UID, USER};

/// An account on the node image: its name, uid and groups (the first is its own).
struct Account {
    name: &'static str,
    uid: u32,
    groups: &'static [(u32, &'static str)],
}

const USER_ACCOUNT: Account = Account { name: USER, uid: UID, groups: GROUPS };
const ROOT: Account = Account { name: "root", uid: 0, groups: &[(0, "root")] };

impl Account {
    fn of(invocation: &Invocation) -> &'static Account {
        if is_root(invocation.env) {
            &ROOT
        } else {
            &USER_ACCOUNT
        }
    }

    fn named(name: &str) -> Option<&'static Account> {
        [&USER_ACCOUNT, &ROOT].into_iter().find(|account| account.name == name || account.uid.to_string() == name)
    }

    fn group(&self) -> (u32, &'static str) {
        self.groups[0]
    }
}

pub struct Whoami;

static WHOAMI: Signature = Signature {
    name: "whoami",
    summary: "print effective user name",
    usage: "whoami [OPTION]...",
    flags: &[],
    examples: &[Example { command: "sudo whoami", description: "root: sudo runs the command as the superuser" }],
};

impl Command for Whoami {
    fn signature(&self) -> &'static Signature {
        &WHOAMI
    }

    fn run(&self, invocation: &Invocation) -> Output {
        if let Err(output) = getopt_without_operands(&WHOAMI, &COREUTILS, invocation.args()) {
            return output;
        }
        Output::ok(format!("{}\n", Account::of(invocation).name))
    }
}

pub struct Id;

static ID: Signature = Signature {
    name: "id",
    summary: "print real and effective user and group IDs",
    usage: "id [OPTION]... [USER]...",
    flags: &[
        Flag { short: Some('g'), long: Some("group"), value: None, help: "print only the effective group ID" },
        Flag { short: Some('G'), long: Some("groups"), value: None, help: "print all group IDs" },
        Flag { short: Some('n'), long: Some("name"), value: None, help: "print a name instead of a number, for -ugG" },
        Flag { short: Some('r'), long: Some("real"), value: None, help: "print the real ID instead of the effective ID, with -ugG" },
        Flag { short: Some('u'), long: Some("user"), value: None, help: "print only the effective user ID" },
        Flag { short: Some('z'), long: Some("zero"), value: None, help: "delimit entries with NUL characters, not whitespace" },
    ],
    examples: &[Example { command: "id", description: "your uid, gid and groups (adm may read the logs, sudo may become root)" }],
};

impl Command for Id {
    fn signature(&self) -> &'static Signature {
        &ID
    }

    fn run(&self, invocation: &Invocation) -> Output {
        let parsed = match getopt(&ID, &COREUTILS, invocation.args()) {
            Ok(parsed) => parsed,
            Err(output) => return output,
        };
        let given = |letter: char| parsed.options.iter().any(|opt| matches!(opt, Opt::Flag(flag, _) if flag.short == Some(letter)));
        let (user_only, group_only, all_groups, names, zero) = (given('u'), given('g'), given('G'), given('n'), given('z'));
        let selected = [user_only, group_only, all_groups].iter().filter(|on| **on).count();
        if selected > 1 {
            return usage_error("id", &COREUTILS, "cannot print \"only\" of more than one choice");
        }
        if selected == 0 && (names || given('r')) {
            return Output::error("id: cannot print only names or real IDs in default format\n", 1);
        }
        if selected == 0 && zero {
            return Output::error("id: option --zero not permitted in default format\n", 1);
        }
        let accounts: Vec<&Account> = if parsed.operands.is_empty() {
            vec![Account::of(invocation)]
        } else {
            let mut found = Vec::new();
            for name in &parsed.operands {
                match Account::named(name) {
                    Some(account) => found.push(account),
                    None => return Output::error(format!("id: {}: no such user\n", quote(name)), 1),
                }
            }
            found
        };
        let end = if zero { "\0" } else { "\n" };
        let show = |(number, name): (u32, &str)| if names { name.to_string() } else { number.to_string() };
        let mut out = String::new();
        for account in accounts {
            out += &if user_only {
                show((account.uid, account.name))
            } else if group_only {
                show(account.group())
            } else if all_groups {
                account.groups.iter().map(|group| show(*group)).collect::<Vec<_>>().join(if zero { "\0" } else { " " })
            } else {
                let (gid, group) = account.group();
                let groups: Vec<String> = account.groups.iter().map(|(number, name)| format!("{number}({name})")).collect();
                format!("uid={}({}) gid={gid}({group}) groups={}", account.uid, account.name, groups.join(","))
            };
            out += end;
        }
        Output::ok(out)
    }
}

pub struct Groups;

static GROUPS_SIGNATURE: Signature = Signature {
    name: "groups",
    summary: "print the groups a user is in",
    usage: "groups [OPTION]... [USERNAME]...",
    flags: &[],
    examples: &[Example { command: "groups", description: "your groups: adm may read the logs, sudo may become root" }],
};

impl Command for Groups {
    fn signature(&self) -> &'static Signature {
        &GROUPS_SIGNATURE
    }

    fn run(&self, invocation: &Invocation) -> Output {
        let parsed = match getopt(&GROUPS_SIGNATURE, &COREUTILS, invocation.args()) {
            Ok(parsed) => parsed,
            Err(output) => return output,
        };
        let names = |account: &Account| account.groups.iter().map(|(_, name)| *name).collect::<Vec<_>>().join(" ");
        if parsed.operands.is_empty() {
            return Output::ok(format!("{}\n", names(Account::of(invocation))));
        }
        let mut output = Output::default();
        for name in &parsed.operands {
            match Account::named(name).filter(|account| account.name == name) {
                Some(account) => output.stdout += &format!("{name} : {}\n", names(account)),
                None => {
                    output.stderr += &format!("groups: {}: no such user\n", quote(name));
                    output.status = 1;
                }
            }
        }
        output
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::run_on_first_node;

    #[test]
    fn the_user_and_root() {
        assert_eq!(run_on_first_node("whoami").stdout, "user\n");
        assert_eq!(run_on_first_node("sudo whoami").stdout, "root\n");
        assert_eq!(run_on_first_node("id").stdout, "uid=1000(user) gid=1000(user) groups=1000(user),4(adm),27(sudo)\n");
        assert_eq!(run_on_first_node("sudo id").stdout, "uid=0(root) gid=0(root) groups=0(root)\n");
        assert_eq!(run_on_first_node("id -un").stdout, "user\n");
        assert_eq!(run_on_first_node("id -u").stdout, "1000\n");
        assert_eq!(run_on_first_node("id -Gn").stdout, "user adm sudo\n");
        assert_eq!(run_on_first_node("id root").stdout, "uid=0(root) gid=0(root) groups=0(root)\n");
        assert_eq!(run_on_first_node("groups").stdout, "user adm sudo\n");
        assert_eq!(run_on_first_node("groups root").stdout, "root : root\n");
    }

    #[test]
    fn errors_as_coreutils_words_them() {
        let out = run_on_first_node("id bob");
        assert_eq!((out.stderr.as_str(), out.status), ("id: \u{2018}bob\u{2019}: no such user\n", 1));
        let out = run_on_first_node("id -n");
        assert_eq!((out.stderr.as_str(), out.status), ("id: cannot print only names or real IDs in default format\n", 1));
        let out = run_on_first_node("whoami x");
        assert_eq!(out.stderr, "whoami: extra operand \u{2018}x\u{2019}\nTry 'whoami --help' for more information.\n");
        assert_eq!(run_on_first_node("id -ug").status, 1);
    }
}
