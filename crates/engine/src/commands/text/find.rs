//! `find`: GNU findutils' walk of a node's file tree, with the tests
//! operators use (`-name -iname -path -type -maxdepth -mindepth -empty
//! -newer`), the operators (`! -not -a -and -o -or ( )`), and the actions
//! `-print`, `-print0`, `-exec CMD {} ;` and `-exec CMD {} +` (through the
//! invocation's runner). Entries come in name order (a real file system's
//! order is the directory's). The walk visits at most `MAX_VISITS` entries.

use crate::commands::files::{Kind, View};
use crate::commands::{Command, Example, Invocation, Output, Signature};
use crate::pattern;

pub struct Find;

static SIGNATURE: Signature = Signature {
    name: "find",
    summary: "search for files in a directory hierarchy",
    usage: "find [starting-point...] [expression]",
    flags: &[],
    examples: &[
        Example { command: "find /sys/class/infiniband -name rate", description: "every port's rate file" },
        Example { command: "find /sys/class/infiniband/*/ports/1/counters -name 'symbol_error' -exec cat {} +", description: "every port's symbol errors" },
    ],
};

const MAX_VISITS: usize = crate::limits::MAX_FIND_VISITS;

#[derive(Clone, Debug)]
enum Expr {
    Name(String, bool),
    Path(String),
    Type(char),
    Empty,
    Newer(i64),
    True,
    Print(char),
    Exec { command: Vec<String>, batch: bool },
    Not(Box<Expr>),
    And(Box<Expr>, Box<Expr>),
    Or(Box<Expr>, Box<Expr>),
}

struct Parser<'a> {
    args: &'a [String],
    at: usize,
    maxdepth: Option<usize>,
    mindepth: usize,
    has_action: bool,
    view: &'a View<'a>,
    /// How deep `(` and `!` nest now: the parser recurses per level.
    depth: usize,
}

fn error(message: String) -> Output {
    Output::error(format!("find: {message}\n"), 1)
}

impl Parser<'_> {
    fn peek(&self) -> Option<&str> {
        self.args.get(self.at).map(String::as_str)
    }

    fn or(&mut self) -> Result<Expr, Output> {
        let mut left = self.and()?;
        while matches!(self.peek(), Some("-o" | "-or")) {
            self.at += 1;
            let right = self.and()?;
            left = Expr::Or(Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    fn and(&mut self) -> Result<Expr, Output> {
        let mut left = self.unary()?;
        loop {
            match self.peek() {
                None | Some("-o" | "-or" | ")") => return Ok(left),
                Some("-a" | "-and") => self.at += 1,
                Some(_) => {}
            }
            let right = self.unary()?;
            left = Expr::And(Box::new(left), Box::new(right));
        }
    }

    fn unary(&mut self) -> Result<Expr, Output> {
        if self.depth > crate::limits::MAX_SYNTAX_DEPTH {
            return Err(error(format!("expression nested too deeply (at most {} levels)", crate::limits::MAX_SYNTAX_DEPTH)));
        }
        self.depth += 1;
        let result = self.unary_inner();
        self.depth -= 1;
        result
    }

    fn unary_inner(&mut self) -> Result<Expr, Output> {
        match self.peek() {
            Some("!" | "-not") => {
                self.at += 1;
                Ok(Expr::Not(Box::new(self.unary()?)))
            }
            Some("(") => {
                self.at += 1;
                let inner = self.or()?;
                if self.peek() != Some(")") {
                    return Err(error("invalid expression; I was expecting to find a ')' somewhere but did not see one.".into()));
                }
                self.at += 1;
                Ok(inner)
            }
            _ => self.primary(),
        }
    }

    fn value(&mut self, test: &str) -> Result<String, Output> {
        self.at += 1;
        match self.args.get(self.at) {
            Some(value) => {
                self.at += 1;
                Ok(value.clone())
            }
            None => Err(error(format!("missing argument to `{test}'"))),
        }
    }

    fn primary(&mut self) -> Result<Expr, Output> {
        let Some(test) = self.peek().map(str::to_string) else {
            return Err(error("expected an expression".into()));
        };
        Ok(match test.as_str() {
            "-name" | "-iname" => Expr::Name(self.value(&test)?, test == "-iname"),
            "-path" | "-wholename" => Expr::Path(self.value(&test)?),
            "-type" => {
                let kind = self.value(&test)?;
                match kind.as_str() {
                    "f" | "d" | "c" | "l" | "b" | "p" | "s" => Expr::Type(kind.chars().next().unwrap_or('f')),
                    _ => return Err(error(format!("Unknown argument to -type: {kind}"))),
                }
            }
            "-maxdepth" | "-mindepth" => {
                let value = self.value(&test)?;
                let Ok(depth) = value.parse::<usize>() else {
                    return Err(error(format!("Expected a positive decimal integer argument to {test}, but got `{value}'")));
                };
                if test == "-maxdepth" {
                    self.maxdepth = Some(depth);
                } else {
                    self.mindepth = depth;
                }
                Expr::True
            }
            "-empty" => {
                self.at += 1;
                Expr::Empty
            }
            "-newer" => {
                let file = self.value(&test)?;
                match self.view.metadata(&file) {
                    Some(meta) => Expr::Newer(meta.modified),
                    None => return Err(error(format!("‘{file}’: No such file or directory"))),
                }
            }
            "-print" | "-print0" => {
                self.at += 1;
                self.has_action = true;
                Expr::Print(if test == "-print" { '\n' } else { '\0' })
            }
            "-exec" => {
                self.at += 1;
                let start = self.at;
                // `;` ends the command; so does `+` right after `{}`.
                let end = (start..self.args.len()).find(|&i| self.args[i] == ";" || (self.args[i] == "+" && i > start && self.args[i - 1] == "{}"));
                let Some(end) = end else {
                    return Err(error("missing argument to `-exec'".into()));
                };
                let length = end - start;
                let command: Vec<String> = self.args[start..end].to_vec();
                let batch = self.args[end] == "+";
                if command.is_empty() {
                    return Err(error("missing argument to `-exec'".into()));
                }
                self.at = start + length + 1;
                self.has_action = true;
                Expr::Exec { command, batch }
            }
            other if other.starts_with('-') => return Err(error(format!("unknown predicate `{other}'"))),
            other => return Err(error(format!("paths must precede expression: `{other}'"))),
        })
    }
}

struct Walk<'a> {
    view: &'a View<'a>,
    invocation: &'a Invocation<'a>,
    output: Output,
    /// Paths gathered for `-exec ... {} +`.
    batch: Vec<String>,
    visits: usize,
}

impl Walk<'_> {
    fn test(&mut self, expr: &Expr, path: &str, meta: &crate::commands::files::Metadata) -> bool {
        match expr {
            Expr::True => true,
            Expr::Name(glob, fold) => {
                let base = super::basename::base(path, "");
                if *fold {
                    pattern::matches(&glob.to_lowercase(), &base.to_lowercase())
                } else {
                    pattern::matches(glob, &base)
                }
            }
            Expr::Path(glob) => pattern::matches(glob, path),
            Expr::Type(kind) => matches!((kind, meta.kind), ('f', Kind::File) | ('d', Kind::Directory) | ('c', Kind::CharDevice)),
            Expr::Empty => match meta.kind {
                Kind::Directory => self.view.list(&meta.path).is_some_and(|names| names.is_empty()),
                // A kernel file's size says nothing of its content; find goes by the size.
                Kind::File => meta.size == 0,
                Kind::CharDevice => false,
            },
            Expr::Newer(at) => meta.modified > *at,
            Expr::Print(end) => {
                self.output.stdout.push_str(path);
                self.output.stdout.push(*end);
                true
            }
            Expr::Exec { batch: true, .. } => {
                self.batch.push(path.to_string());
                true
            }
            Expr::Exec { command, batch: false } => {
                let argv: Vec<String> = command.iter().map(|arg| arg.replace("{}", path)).collect();
                self.exec(&argv) == 0
            }
            Expr::Not(inner) => !self.test(inner, path, meta),
            Expr::And(left, right) => self.test(left, path, meta) && self.test(right, path, meta),
            Expr::Or(left, right) => self.test(left, path, meta) || self.test(right, path, meta),
        }
    }

    fn exec(&mut self, argv: &[String]) -> i32 {
        let call = self.invocation.call_on(&self.invocation.node.hostname, Some(self.invocation.env));
        match self.invocation.runner.run_program(call, argv) {
            Some(ran) => self.output.absorb(ran),
            None => {
                self.output.stderr.push_str(&format!("find: ‘{}’: No such file or directory\n", argv[0]));
                self.output.status = 1;
                1
            }
        }
    }

    fn visit(&mut self, expr: &Expr, path: &str, depth: usize, limits: (usize, Option<usize>)) {
        self.visits += 1;
        if self.visits > MAX_VISITS || self.output.stdout.len() > crate::limits::MAX_OUTPUT_BYTES {
            return;
        }
        let Some(meta) = self.view.metadata(path) else { return };
        if depth >= limits.0 {
            self.test(expr, path, &meta);
        }
        if meta.kind != Kind::Directory || limits.1.is_some_and(|max| depth >= max) {
            return;
        }
        if !self.view.listable(path) {
            self.output.stderr.push_str(&format!("find: ‘{path}’: Permission denied\n"));
            self.output.status = 1;
            return;
        }
        for (name, _) in self.view.list(path).unwrap_or_default() {
            let child = if path.ends_with('/') { format!("{path}{name}") } else { format!("{path}/{name}") };
            self.visit(expr, &child, depth + 1, limits);
        }
    }
}

impl Command for Find {
    fn signature(&self) -> &'static Signature {
        &SIGNATURE
    }

    fn run(&self, invocation: &Invocation) -> Output {
        let args = invocation.args();
        if args.first().map(String::as_str) == Some("--help") {
            return Output::ok(format!("Usage: {} \n\nDefault path is the current directory; default expression is -print.\n", SIGNATURE.usage));
        }
        let paths_end = args.iter().position(|arg| arg.starts_with('-') && arg.len() > 1 || arg == "!" || arg == "(").unwrap_or(args.len());
        let mut starts: Vec<String> = args[..paths_end].to_vec();
        if starts.is_empty() {
            starts.push(".".to_string());
        }
        let view = View::for_command(invocation);
        let mut parser = Parser { args: &args[paths_end..], at: 0, maxdepth: None, mindepth: 0, has_action: false, view: &view, depth: 0 };
        let mut expr = if parser.args.is_empty() {
            Expr::True
        } else {
            match parser.or() {
                Ok(expr) => expr,
                Err(output) => return output,
            }
        };
        if let Some(extra) = parser.peek() {
            return error(format!("unexpected `{extra}'"));
        }
        if !parser.has_action {
            expr = Expr::And(Box::new(expr), Box::new(Expr::Print('\n')));
        }
        let limits = (parser.mindepth, parser.maxdepth);
        let mut walk = Walk { view: &view, invocation, output: Output::default(), batch: Vec::new(), visits: 0 };
        for start in &starts {
            if view.kind(start).is_none() {
                walk.output.stderr.push_str(&format!("find: ‘{start}’: No such file or directory\n"));
                walk.output.status = 1;
                continue;
            }
            walk.visit(&expr, start, 0, limits);
        }
        // `-exec CMD {} +`: one run with every path found, where `{}` stood.
        if let Some(command) = find_batch(&expr) {
            if !walk.batch.is_empty() {
                let paths = std::mem::take(&mut walk.batch);
                let mut argv: Vec<String> = command[..command.len() - 1].to_vec();
                argv.extend(paths);
                if walk.exec(&argv) != 0 {
                    walk.output.status = 1;
                }
            }
        }
        if walk.visits > MAX_VISITS {
            walk.output.stderr.push_str(&format!("find: a simulated find visits at most {MAX_VISITS} entries\n"));
            walk.output.status = 1;
        }
        walk.output
    }
}

fn find_batch(expr: &Expr) -> Option<&Vec<String>> {
    match expr {
        Expr::Exec { command, batch: true } => Some(command),
        Expr::Not(inner) => find_batch(inner),
        Expr::And(left, right) | Expr::Or(left, right) => find_batch(left).or_else(|| find_batch(right)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::session;

    #[test]
    fn walks_the_generated_tree() {
        let mut shell = session();
        let rates = shell.run("find /sys/class/infiniband -name rate").stdout();
        assert_eq!(rates.lines().count(), 8);
        assert!(rates.starts_with("/sys/class/infiniband/mlx5_0/ports/1/rate\n"), "{rates}");
        let dirs = shell.run("find /sys/class/infiniband/mlx5_0 -maxdepth 1 -type d").stdout();
        assert_eq!(dirs, "/sys/class/infiniband/mlx5_0\n/sys/class/infiniband/mlx5_0/ports\n");
        let errors = shell.run("find /sys/class/infiniband/mlx5_0/ports/1/counters -name 'symbol_*' -exec cat {} +").stdout();
        assert_eq!(errors, "0\n");
        let each = shell.run("find /sys/class/infiniband/mlx5_[01]/ports/1 -name state -exec cat {} \\;").stdout();
        assert_eq!(each, "4: ACTIVE\n4: ACTIVE\n");
        shell.run("echo a > one.txt; echo b > two.log");
        assert_eq!(shell.run("find . -name '*.txt' -o -name '*.log'").stdout(), "./one.txt\n./two.log\n");
        assert_eq!(shell.run("find ~ -type f ! -name '*.txt'").stdout(), "/home/user/two.log\n");
        let bad = shell.run("find . -bogus");
        assert_eq!((bad.stderr().as_str(), bad.status), ("find: unknown predicate `-bogus'\n", 1));
        let missing = shell.run("find /nope");
        assert_eq!((missing.stderr().as_str(), missing.status), ("find: ‘/nope’: No such file or directory\n", 1));
    }
}
