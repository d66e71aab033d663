//! Files and redirections: what a command reads and writes through the
//! shell (`<`, `>`, `>>`, `2>&1`, here-strings), the writes landing when
//! it ends.

use super::*;

impl<'c, 's> Interp<'c, 's> {
    pub(in crate::shell) fn file_view(&self) -> files::View<'_> {
        files::View::new(&self.cluster, &self.shell.host, self.shell.cwd()).as_root(commands::is_root(&self.shell.env))
    }

    pub(super) fn read_file(&self, path: &str) -> Result<String, &'static str> {
        self.file_view().read(path).map(Cow::into_owned)
    }

    /// Applies redirections around `run`: opens the files (writes land
    /// when it ends), routes its standard output and error, feeds its
    /// standard input.
    pub(super) fn with_redirects(
        &mut self,
        redirects: &[Redirect],
        input: &mut Input,
        out: &mut Transcript,
        run: &mut dyn FnMut(&mut Self, &mut Input, &mut Transcript) -> i32,
    ) -> i32 {
        let mut sinks = [Sink::Stdout, Sink::Stderr];
        // Files opened: absolute path, text written, whether appended.
        let mut opened: Vec<(String, String, bool)> = Vec::new();
        let mut new_input: Option<Input> = None;
        for redirect in redirects {
            let Some(target) = self.expand_text(&redirect.target, out) else {
                return 1;
            };
            let fd = redirect.fd as usize;
            match redirect.kind {
                RedirectKind::Input => match self.read_file(&target) {
                    Ok(text) if fd == 0 => new_input = Some(Input::new(text)),
                    Ok(_) => {}
                    Err(reason) => {
                        self.emit(out, Stream::Stderr, format!("-bash: {target}: {reason}\n"));
                        return 1;
                    }
                },
                RedirectKind::HereString => new_input = Some(Input::new(target + "\n")),
                RedirectKind::HereDocument => new_input = Some(Input::new(target)),
                RedirectKind::Duplicate => {
                    let copy = match target.as_str() {
                        "1" => sinks[0],
                        "2" => sinks[1],
                        "-" => Sink::Discard,
                        "0" if fd == 0 => continue,
                        _ => {
                            self.emit(out, Stream::Stderr, format!("-bash: {target}: Bad file descriptor\n"));
                            return 1;
                        }
                    };
                    if let Some(sink) = sinks.get_mut(fd.wrapping_sub(1)) {
                        *sink = copy;
                    }
                }
                RedirectKind::Output | RedirectKind::Append | RedirectKind::Both | RedirectKind::BothAppend => {
                    let append = matches!(redirect.kind, RedirectKind::Append | RedirectKind::BothAppend);
                    let sink = match self.open_for_writing(&target, append, &mut opened) {
                        Ok(sink) => sink,
                        Err(reason) => {
                            self.emit(out, Stream::Stderr, format!("-bash: {target}: {reason}\n"));
                            return 1;
                        }
                    };
                    match redirect.kind {
                        RedirectKind::Both | RedirectKind::BothAppend => sinks = [sink, sink],
                        _ => {
                            if let Some(slot) = sinks.get_mut(fd.wrapping_sub(1)) {
                                *slot = sink;
                            }
                        }
                    }
                }
            }
        }
        let mut sub = Transcript::default();
        let capture = sinks != [Sink::Stdout, Sink::Stderr];
        if capture {
            self.capturing += 1;
        }
        let status = match new_input.as_mut() {
            Some(redirected) => run(self, redirected, &mut sub),
            None => run(self, input, &mut sub),
        };
        if capture {
            self.capturing -= 1;
        }
        self.route(sub, sinks, &mut opened, out);
        self.write_files(opened, out);
        status
    }

    /// Where writing to `target` goes; a file is opened (truncated unless appending).
    pub(super) fn open_for_writing(&self, target: &str, append: bool, opened: &mut Vec<(String, String, bool)>) -> Result<Sink, &'static str> {
        match target {
            "/dev/null" => return Ok(Sink::Discard),
            "/dev/stdout" => return Ok(Sink::Stdout),
            "/dev/stderr" => return Ok(Sink::Stderr),
            "" => return Err("No such file or directory"),
            _ => {}
        }
        let view = self.file_view();
        let path = view.resolve(target);
        if !view.is_attribute(&path) {
            view.check_writable(&path)?;
        } else if !commands::is_root(&self.shell.env) {
            return Err("Permission denied");
        }
        let at = match opened.iter().position(|(p, _, _)| *p == path) {
            Some(at) => at,
            None => {
                opened.push((path, String::new(), append));
                opened.len() - 1
            }
        };
        Ok(Sink::File(at))
    }

    /// Sends a redirected command's output where its descriptors point,
    /// keeping the timeline of what reaches the terminal.
    pub(super) fn route(&mut self, sub: Transcript, sinks: [Sink; 2], opened: &mut [(String, String, bool)], out: &mut Transcript) {
        // (bytes into sub, bytes into out) after each chunk.
        let mut offsets = vec![(0usize, out.len())];
        let mut inner = 0;
        for (stream, text) in sub.chunks {
            inner += text.len();
            match sinks[if stream == Stream::Stderr { 1 } else { 0 }] {
                Sink::Stdout => self.emit(out, Stream::Stdout, text),
                Sink::Stderr => self.emit(out, Stream::Stderr, text),
                Sink::Discard => {}
                Sink::File(at) => {
                    let file = &mut opened[at].1;
                    if file.len() + text.len() <= files::MAX_FILE_BYTES {
                        file.push_str(&text);
                    }
                }
            }
            offsets.push((inner, out.len()));
        }
        for (ms, bytes) in sub.timeline {
            let shown = offsets.iter().take_while(|(i, _)| *i <= bytes).last().map_or(out.len(), |(_, o)| *o);
            out.timeline.push((ms, shown));
        }
        out.timeline.push((self.line_ms, out.len()));
    }

    pub(super) fn write_files(&mut self, opened: Vec<(String, String, bool)>, out: &mut Transcript) {
        let node = self.shell.host.clone();
        let mut changes = Vec::new();
        for (path, text, append) in opened {
            // A kernel attribute takes the value as a setting, not as a file.
            if let Some(written) = self.file_view().attribute_write(&path, &text) {
                match written {
                    Ok(change) => changes.push(change),
                    Err(reason) => self.emit(out, Stream::Stderr, format!("-bash: echo: write error: {reason}\n")),
                }
                continue;
            }
            if let Err(reason) = self.file_view().check_room(&path, text.len(), append) {
                self.emit(out, Stream::Stderr, format!("-bash: {path}: {reason}\n"));
                continue;
            }
            changes.push(Change::WriteFile { node: node.clone(), path, text, append });
        }
        self.apply(&changes, 0);
    }
}
