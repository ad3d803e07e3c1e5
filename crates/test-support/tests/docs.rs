//! Docs that stay true: every path, test and Rust symbol that
//! `docs/ARCHITECTURE.md` and `docs/SUPPORT.md` cite in backticks must
//! exist in the repository, and the test fails naming the document, the
//! line and the reference of each one that does not.
//!
//! It reads files only, so any crate could hold it; it lives with the
//! tests' shared support, which builds in seconds, where a test of the CLI
//! would first build the whole executor, Cranelift and the runtime.
//!
//! What a backticked span is taken for (`classify`):
//!
//! * **a path** (has a `/` or ends in a source or data extension): relative
//!   to the repository root; or to `crates/` (`exec/tests/isa_exec.rs`);
//!   or, in a section whose heading names crate folders (ARCHITECTURE's
//!   "Inside the executor" names `crates/arena`, …), to one of those
//!   crates, its `src/` or its `tests/` and nothing else; elsewhere to any
//!   crate, its `src/` or `tests/`, or as the tail of any path. In a table
//!   row whose first or second cell is a folder (`sanitize/`,
//!   `crates/codeobj`), relative to that folder first. A `*` matches within
//!   a name.
//! * **a test** (`file.rs::name`, `file.rs::tests::name`): the file as a
//!   path, and its first name defined in it (or a module under it); the
//!   last name, when there are several (a test a macro generates), defined
//!   anywhere.
//! * **a symbol** (`Program::compiled`, `ops::handler_for`, `Device`): a
//!   path whose first segment is a crate (`softgpu_exec`, `interp`) or a
//!   module (a file or inline `mod` of that name in a crate's `src/` or
//!   `tests/`) is walked module by module; the first name left must be
//!   defined (or re-exported) in that module or one under it, the names
//!   after it (a type's members) in that crate. A path starting with a
//!   type needs every name defined in some crate's `src/`. `Op::NAME`
//!   needs the op in the ISA tables.
//! * **a name** (`snake_case` with an inner `_`: a test or function named
//!   alone, a field) or **a constant** (`UPPER_CASE`): the name occurs in
//!   the code (crates, include, tests, fuzz, examples), as a word or the
//!   tail of one (`get_mask` of `hsa_amd_queue_cu_get_mask`).
//! * **a package** (`softgpu-exec`): a crate's package name.
//!
//! Skipped, by rule: environment variables, C, HSA and HIP API names
//! (`hsa_*`, `hip*`, `__*`, lowerCamelCase, and a `/`-joined tail of one
//! such as `hipHostRegister`/`Unregister`), instruction mnemonics (a prefix
//! of an op in the ISA tables), lint names, absolute and home paths, paths
//! with placeholders (`decode/FAMILY.rs`), standard-library names, single
//! lower-case words, tool and package names with `-`, and anything with
//! spaces or operators (commands, snippets). `NOT_REFERENCES` lists the
//! few spans those rules cannot tell from references.
//!
//! `cargo test -p softgpu-test-support --test docs -- --nocapture` prints what
//! was checked and what was skipped, by kind.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::fs;
use std::path::{Path, PathBuf};

const DOCS: [&str; 2] = ["docs/ARCHITECTURE.md", "docs/SUPPORT.md"];

/// This file, whose words are not the code's.
const THIS: &str = "crates/test-support/tests/docs.rs";

/// Spans that look like references but name nothing of the repository.
const NOT_REFERENCES: &[(&str, &str)] = &[
    ("hsa.h", "Debian's HSA header"),
    (
        "hostcall_impl.cl",
        "a source file of ROCm's device libraries",
    ),
    ("dispatch.json", "a file a capture writes"),
    ("softgpu-default", "a provenance value of device profiles"),
    ("process_vm_readv", "a system call softgpu does not use"),
    ("AqlQueue::SetCUMasking", "ROCr's C++ method"),
    ("HtoD", "part of HIP's hipMemcpyHtoD"),
    ("DtoH", "part of HIP's hipMemcpyDtoH"),
    ("DtoD", "part of HIP's hipMemcpyDtoD"),
    ("FLAT_SCRATCH", "a hardware register"),
    (".l/.h", "true16 half-register suffixes"),
    (
        "crate/tests/file.rs::test",
        "the naming convention's placeholder",
    ),
    ("crate::module", "the naming convention's placeholder"),
];

/// Names from the standard library.
const STD: &[&str] = &[
    "Arc",
    "AtomicU16",
    "Box",
    "Display",
    "Option",
    "Result",
    "Some",
    "String",
    "Vec",
    "include_str",
];

/// Extensions that make a span a file name.
const EXTENSIONS: &[&str] = &[
    ".rs", ".md", ".tsv", ".txt", ".sh", ".py", ".json", ".cl", ".hip", ".cpp", ".h", ".c", ".toml",
];

/// Capitalised words that stand for a value in a path.
const PLACEHOLDERS: &[&str] = &["FAMILY", "NAME", "FILE", "DIR", "N", "TARGET"];

/// Prefixes of instruction mnemonics.
const MNEMONIC_PREFIXES: &[&str] = &[
    "v_", "s_", "ds_", "global_", "flat_", "scratch_", "buffer_", "tbuffer_", "image_", "lds_",
    "exp",
];

/// The files of code whose words a name or constant may be.
const CODE_EXTENSIONS: &[&str] = &[
    "rs", "c", "h", "hip", "cl", "cpp", "sh", "py", "toml", "tsv", "txt", "json",
];

#[derive(Debug)]
enum Reference {
    Path(String),
    Test(String, Vec<String>),
    Symbol(Vec<String>),
    Name(String),
    Constant(String),
    Package(String),
}

impl Reference {
    fn kind(&self) -> &'static str {
        match self {
            Reference::Path(_) => "path",
            Reference::Test(..) => "test",
            Reference::Symbol(_) => "symbol",
            Reference::Name(_) => "name",
            Reference::Constant(_) => "constant",
            Reference::Package(_) => "package",
        }
    }
}

enum Class {
    Skip(&'static str),
    Check(Vec<Reference>),
}

/// What one Rust file defines.
#[derive(Default)]
struct Defs {
    names: HashSet<String>,
    inline_mods: HashSet<String>,
}

struct Repo {
    root: PathBuf,
    files: BTreeSet<String>,
    dirs: BTreeSet<String>,
    crates: Vec<String>,
    packages: HashSet<String>,
    rust: BTreeMap<String, Defs>,
    words: HashSet<String>,
    mnemonics: BTreeSet<String>,
}

fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

fn is_ident(s: &str) -> bool {
    !s.is_empty() && s.chars().all(is_ident_char) && !s.starts_with(|c: char| c.is_ascii_digit())
}

/// The identifiers of a line, with their byte offsets.
fn idents(line: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in line.char_indices().chain([(line.len(), ' ')]) {
        match (start, is_ident_char(c)) {
            (None, true) => start = Some(i),
            (Some(s), false) => {
                if !line[s..i].starts_with(|c: char| c.is_ascii_digit()) {
                    out.push((s, &line[s..i]));
                }
                start = None;
            }
            _ => {}
        }
    }
    out
}

/// The names a Rust file defines: items after their keyword, fields and
/// variants (a name opening a line before `:`, `,`, `{`, `(` or `=`), the
/// first argument of a macro invocation (`per_target!(name, …)`), and
/// every name of a `pub use`.
fn definitions(text: &str) -> Defs {
    const KEYWORDS: &[&str] = &[
        "fn", "struct", "enum", "trait", "type", "union", "mod", "const", "static",
    ];
    const SKIP: &[&str] = &["fn", "mut", "unsafe", "async", "extern"];
    let mut defs = Defs::default();
    let mut in_use = false;
    for line in text.lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("//") {
            continue;
        }
        let words = idents(line);
        if trimmed.starts_with("pub use ")
            || (trimmed.starts_with("pub(") && trimmed.contains(") use "))
        {
            in_use = true;
        }
        if in_use {
            defs.names.extend(words.iter().map(|(_, w)| w.to_string()));
            if line.contains(';') {
                in_use = false;
            }
        }
        for (k, (at, word)) in words.iter().enumerate() {
            if KEYWORDS.contains(word) {
                let next = words[k + 1..].iter().find(|(_, w)| !SKIP.contains(w));
                if let Some((at_name, name)) = next {
                    // `mod name {` is a module in this file.
                    if *word == "mod" && line[at_name + name.len()..].trim_start().starts_with('{')
                    {
                        defs.inline_mods.insert(name.to_string());
                    }
                    defs.names.insert(name.to_string());
                }
            }
            if *word == "macro_rules" && line[at + word.len()..].starts_with('!') {
                if let Some((_, name)) = words.get(k + 1) {
                    defs.names.insert(name.to_string());
                }
            }
            if line[..*at].ends_with("!(") && line[at + word.len()..].trim_start().starts_with(',')
            {
                defs.names.insert(word.to_string());
            }
        }
        // A name opening the line, after any visibility.
        if trimmed.starts_with('#') {
            continue;
        }
        let mut rest = trimmed;
        if let Some(r) = rest.strip_prefix("pub") {
            rest = match r.strip_prefix('(') {
                Some(r) => r.split_once(')').map_or("", |(_, r)| r),
                None => r,
            }
            .trim_start();
        }
        let end = rest.find(|c: char| !is_ident_char(c)).unwrap_or(rest.len());
        let (name, after) = rest.split_at(end);
        let after = after.trim_start();
        let opens = after.is_empty()
            || after.starts_with([',', '{', '('])
            || (after.starts_with(':') && !after.starts_with("::"))
            || (after.starts_with('=') && !after.starts_with("==") && !after.starts_with("=>"));
        if is_ident(name) && opens {
            defs.names.insert(name.to_string());
        }
    }
    defs
}

impl Repo {
    fn load() -> Repo {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let root = root.canonicalize().expect("the repository root");
        assert!(root.join(THIS).is_file(), "{THIS} is not this test's path");
        let mut repo = Repo {
            root,
            files: BTreeSet::new(),
            dirs: BTreeSet::new(),
            crates: Vec::new(),
            packages: HashSet::new(),
            rust: BTreeMap::new(),
            words: HashSet::new(),
            mnemonics: BTreeSet::new(),
        };
        let root = repo.root.clone();
        repo.walk(&root, "");
        for dir in &repo.dirs {
            if let Some(name) = dir.strip_prefix("crates/") {
                if !name.contains('/') && repo.files.contains(&format!("{dir}/Cargo.toml")) {
                    repo.crates.push(name.to_string());
                }
            }
        }
        assert!(
            repo.crates.len() > 5,
            "no crates found under {}",
            repo.root.display()
        );
        let code: Vec<String> = repo
            .files
            .iter()
            .filter(|f| {
                let top = f.split('/').next().unwrap();
                let ext = f.rsplit('.').next().unwrap();
                (["crates", "include", "tests", "fuzz", "examples", "scripts"].contains(&top)
                    || *f == "Cargo.toml")
                    && CODE_EXTENSIONS.contains(&ext)
            })
            .cloned()
            .collect();
        for file in code {
            let Ok(text) = fs::read_to_string(repo.root.join(&file)) else {
                continue; // not text
            };
            // This file names what it skips and stale names of its own.
            let this = file == THIS;
            for line in text.lines().filter(|_| !this) {
                for (_, word) in idents(line) {
                    // A word, and every tail of it after an `_`.
                    let mut tail = word;
                    loop {
                        repo.words.insert(tail.to_string());
                        match tail.split_once('_') {
                            Some((_, t)) if !t.is_empty() => tail = t,
                            _ => break,
                        }
                    }
                }
            }
            if file.ends_with(".rs") && (file.starts_with("crates/") || file.starts_with("fuzz/")) {
                repo.rust.insert(file.clone(), definitions(&text));
            }
            if file.starts_with("crates/") && file.ends_with("/Cargo.toml") {
                if let Some(name) = text.lines().find_map(|l| {
                    let v = l.strip_prefix("name")?.trim_start().strip_prefix('=')?;
                    Some(v.trim().trim_matches('"').to_string())
                }) {
                    repo.packages.insert(name);
                }
            }
            if file.starts_with("crates/isa/data/") && file.ends_with("-ops.tsv") {
                for line in text.lines().filter(|l| !l.starts_with('#')) {
                    if let Some(name) = line.split('\t').next() {
                        repo.mnemonics.insert(name.to_string());
                    }
                }
            }
        }
        assert!(
            !repo.mnemonics.is_empty(),
            "no op tables in crates/isa/data"
        );
        repo
    }

    fn walk(&mut self, dir: &Path, rel: &str) {
        let entries = fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        for entry in entries {
            let entry = entry.expect("a directory entry");
            let name = entry.file_name().to_string_lossy().into_owned();
            // Git's and the builds' folders, and the fuzzers' inputs.
            let ignored = name == ".git"
                || name == "target"
                || name.starts_with("target-")
                || (rel == "fuzz" && (name == "corpus" || name == "artifacts"));
            if ignored {
                continue;
            }
            let path = if rel.is_empty() {
                name
            } else {
                format!("{rel}/{name}")
            };
            let kind = entry.file_type().expect("a file type");
            if kind.is_dir() {
                self.dirs.insert(path.clone());
                self.walk(&entry.path(), &path);
            } else {
                self.files.insert(path);
            }
        }
    }

    /// Files and folders `pattern` (a path, `*` matching within a name)
    /// names, relative to the root.
    fn matching(&self, pattern: &str) -> Vec<String> {
        let pattern = normalise(pattern);
        if !pattern.contains('*') {
            return if self.files.contains(&pattern) || self.dirs.contains(&pattern) {
                vec![pattern]
            } else {
                vec![]
            };
        }
        self.files
            .iter()
            .chain(&self.dirs)
            .filter(|p| path_matches(&pattern, p))
            .cloned()
            .collect()
    }

    /// Files and folders whose path ends with `tail`.
    fn ending_with(&self, tail: &str) -> Vec<String> {
        let tail = normalise(tail);
        let n = tail.split('/').count();
        self.files
            .iter()
            .chain(&self.dirs)
            .filter(|p| {
                let parts: Vec<&str> = p.split('/').collect();
                parts.len() > n && path_matches(&tail, &parts[parts.len() - n..].join("/"))
            })
            .cloned()
            .collect()
    }

    /// What a path cited in `context` can mean (empty: nothing).
    fn resolve_path(&self, path: &str, context: &Context) -> Vec<String> {
        let first = path.split('/').next().unwrap();
        if self.files.contains(first) || self.dirs.contains(first) {
            let found = self.matching(path);
            if !found.is_empty() || first == "crates" {
                return found;
            }
        }
        if self.crates.iter().any(|c| c == first) {
            let found = self.matching(&format!("crates/{path}"));
            if !found.is_empty() {
                return found;
            }
        }
        let crates: Vec<String> = self.crates.iter().map(|c| format!("crates/{c}")).collect();
        let bases = match context.bases.is_empty() {
            true => &crates,
            false => &context.bases,
        };
        let under = |bases: &[String], path: &str| -> Vec<String> {
            let mut found = Vec::new();
            for base in bases {
                for sub in ["", "/src", "/tests"] {
                    found.extend(self.matching(&format!("{base}{sub}/{path}")));
                }
            }
            found
        };
        // The folder the row is about: a folder of the repository
        // (`examples/`, `crates/codeobj`) or of the crates (`sanitize/`).
        if let Some(folder) = &context.row_folder {
            let found = match self.dirs.contains(folder) {
                true => under(std::slice::from_ref(folder), path),
                false => under(bases, &format!("{folder}/{path}")),
            };
            if !found.is_empty() {
                return found;
            }
        }
        let found = under(bases, path);
        if !found.is_empty() || !context.bases.is_empty() {
            return found;
        }
        self.ending_with(path)
    }

    fn crate_files(&self, krate: &str) -> Vec<&String> {
        let prefix = format!("crates/{krate}/");
        self.rust
            .keys()
            .filter(|f| f.starts_with(&prefix))
            .collect()
    }

    fn defined_in<'a>(&self, name: &str, mut files: impl Iterator<Item = &'a String>) -> bool {
        files.any(|f| self.rust[f].names.contains(name))
    }

    /// The crate a path's first segment names: `softgpu`, `softgpu_exec`,
    /// `exec`, `kernel_tests`.
    fn crate_named(&self, segment: &str) -> Option<String> {
        let name = segment.replace('_', "-");
        let name = match name.strip_prefix("softgpu-") {
            Some(rest) => rest.to_string(),
            None => name,
        };
        self.crates.iter().find(|c| **c == name).cloned()
    }

    /// The file of module `name` declared in `file`: `name.rs` or
    /// `name/mod.rs` beside it (under its own folder unless it is a
    /// `lib.rs`, `main.rs` or `mod.rs`), or `file` itself for an inline
    /// `mod name {`.
    fn submodule(&self, file: &str, name: &str) -> Option<String> {
        let dir = module_dir(file);
        for candidate in [format!("{dir}/{name}.rs"), format!("{dir}/{name}/mod.rs")] {
            if self.rust.contains_key(&candidate) {
                return Some(candidate);
            }
        }
        self.rust[file]
            .inline_mods
            .contains(name)
            .then(|| file.to_string())
    }

    fn check_symbol(&self, segments: &[String]) -> Result<(), String> {
        if segments[0] == "Op" && segments.len() == 2 {
            let op = segments[1].to_lowercase();
            let op = op.strip_suffix("_gfx12").unwrap_or(&op);
            return if self.mnemonics.contains(op) {
                Ok(())
            } else {
                Err(format!("no op `{op}` in crates/isa/data"))
            };
        }
        let first = &segments[0];
        // Where the walk starts: a crate's root or a module of that name.
        let mut starts: Vec<(String, String)> = Vec::new();
        if segments.len() > 1 && first.starts_with(|c: char| c.is_ascii_lowercase()) {
            if let Some(krate) = self.crate_named(first) {
                for root in ["lib.rs", "main.rs"] {
                    let file = format!("crates/{krate}/src/{root}");
                    if self.rust.contains_key(&file) {
                        starts.push((file, krate.clone()));
                        break;
                    }
                }
            } else {
                for (file, defs) in &self.rust {
                    let parts: Vec<&str> = file.split('/').collect();
                    if parts[0] != "crates" || !matches!(parts[2], "src" | "tests") {
                        continue;
                    }
                    let stem = parts[parts.len() - 1].trim_end_matches(".rs");
                    let named = stem == first
                        || (stem == "mod" && parts[parts.len() - 2] == first)
                        || defs.inline_mods.contains(first.as_str());
                    if named {
                        starts.push((file.clone(), parts[1].to_string()));
                    }
                }
            }
            if starts.is_empty() {
                return Err(format!("no crate or module `{first}`"));
            }
        }
        if starts.is_empty() {
            // A type and its members.
            let sources = || {
                self.rust.keys().filter(|f| {
                    let parts: Vec<&str> = f.split('/').collect();
                    parts[0] == "crates" && (parts[2] == "src" || parts[2] == "build.rs")
                })
            };
            for name in segments {
                if !self.defined_in(name, sources()) {
                    return Err(format!("`{name}` is not defined in crates/*/src"));
                }
            }
            return Ok(());
        }
        let mut first_error = None;
        'starts: for (start, krate) in starts {
            // (An inline module found by name starts in its file.)
            let mut file = start;
            let mut rest = &segments[1..];
            while let Some((name, tail)) = rest.split_first() {
                if !name.starts_with(|c: char| c.is_ascii_lowercase()) {
                    break;
                }
                match self.submodule(&file, name) {
                    Some(next) => {
                        file = next;
                        rest = tail;
                    }
                    None if tail.is_empty() => break,
                    None => {
                        first_error.get_or_insert(format!("no module `{name}` in {file}"));
                        continue 'starts;
                    }
                }
            }
            // The first name the module defines (or re-exports), the rest
            // (members of a type) the crate.
            let crate_files = self.crate_files(&krate);
            let module: Vec<&String> = match file.ends_with("/lib.rs") || file.ends_with("/main.rs")
            {
                true => crate_files.clone(),
                false => {
                    let dir = format!("{}/", module_dir(&file));
                    crate_files
                        .iter()
                        .copied()
                        .filter(|f| **f == file || f.starts_with(&dir))
                        .collect()
                }
            };
            if let Some((name, members)) = rest.split_first() {
                if !self.defined_in(name, module.into_iter()) {
                    first_error.get_or_insert(format!("`{name}` is not defined in {file}"));
                    continue 'starts;
                }
                if let Some(name) = members
                    .iter()
                    .find(|m| !self.defined_in(m, crate_files.iter().copied()))
                {
                    first_error.get_or_insert(format!("`{name}` is not defined in crates/{krate}"));
                    continue 'starts;
                }
            }
            return Ok(());
        }
        Err(first_error.unwrap())
    }

    fn check_test(&self, file: &str, names: &[String], context: &Context) -> Result<(), String> {
        let found: Vec<String> = self
            .resolve_path(file, context)
            .into_iter()
            .filter(|f| self.rust.contains_key(f))
            .collect();
        if found.is_empty() {
            return Err(format!("no such file{}", context.under()));
        }
        // The file and the modules under it.
        let mut scope: Vec<&String> = Vec::new();
        for f in &found {
            let dir = format!("{}/", module_dir(f));
            scope.extend(self.rust.keys().filter(|k| *k == f || k.starts_with(&dir)));
        }
        let (first, last) = (&names[0], &names[names.len() - 1]);
        if !self.defined_in(first, scope.iter().copied()) {
            return Err(format!("`{first}` is not defined in {}", found.join(", ")));
        }
        if !self.defined_in(last, self.rust.keys()) {
            return Err(format!("`{last}` is not defined"));
        }
        Ok(())
    }

    fn check(&self, reference: &Reference, context: &Context) -> Result<(), String> {
        match reference {
            Reference::Path(path) => match self.resolve_path(path, context).is_empty() {
                true => Err(format!("no such file or folder{}", context.under())),
                false => Ok(()),
            },
            Reference::Test(file, names) => self.check_test(file, names, context),
            Reference::Symbol(segments) => self.check_symbol(segments),
            Reference::Name(name) | Reference::Constant(name) => match self.words.contains(name) {
                true => Ok(()),
                false => Err("occurs nowhere in the code".into()),
            },
            Reference::Package(name) => match self.packages.contains(name) {
                true => Ok(()),
                false => Err("no crate has this package name".into()),
            },
        }
    }
}

/// A path without `./`, `a/../`, or a trailing `/`.
fn normalise(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    parts.join("/")
}

/// Whether `path` matches `pattern`, name by name, `*` matching any run of
/// characters within a name.
fn path_matches(pattern: &str, path: &str) -> bool {
    let (pattern, path): (Vec<&str>, Vec<&str>) =
        (pattern.split('/').collect(), path.split('/').collect());
    pattern.len() == path.len() && pattern.iter().zip(&path).all(|(p, n)| name_matches(p, n))
}

fn name_matches(pattern: &str, name: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == name,
        Some((head, tail)) => {
            name.starts_with(head)
                && (head.len()..=name.len())
                    .any(|i| name.is_char_boundary(i) && name_matches(tail, &name[i..]))
        }
    }
}

/// The folder a module file's submodules live in.
fn module_dir(file: &str) -> String {
    let (dir, name) = file.rsplit_once('/').unwrap_or(("", file));
    match name {
        "lib.rs" | "main.rs" | "mod.rs" => dir.to_string(),
        _ => file.trim_end_matches(".rs").to_string(),
    }
}

/// Where a span is cited: the crate folders its section is about, and the
/// folder its table row is about.
struct Context {
    bases: Vec<String>,
    row_folder: Option<String>,
}

impl Context {
    fn under(&self) -> String {
        match self.bases.is_empty() {
            true => String::new(),
            false => format!(" (relative to {})", self.bases.join(", ")),
        }
    }
}

/// A backticked span: its line and text, the text between it and the
/// previous span of its block, and the context.
struct Span {
    line: usize,
    text: String,
    before: String,
    bases: Vec<String>,
    row_folder: Option<String>,
}

/// The code spans of a Markdown document, as CommonMark reads them: a run of
/// backticks opens a span that the next run of as many closes (else it is
/// literal text); spans do not cross table cells or blank lines.
fn spans(doc: &str) -> Vec<Span> {
    let lines: Vec<&str> = doc.lines().collect();
    let mut out = Vec::new();
    let mut headings: Vec<(usize, Vec<String>)> = Vec::new();
    let mut bases_at = Vec::with_capacity(lines.len());
    for line in &lines {
        if let Some(level) = heading_level(line) {
            headings.retain(|(l, _)| *l < level);
            let crates = code_spans(line)
                .into_iter()
                .map(|(_, _, s)| s)
                .filter(|s| s.starts_with("crates/") && s.matches('/').count() == 1)
                .collect();
            headings.push((level, crates));
        }
        let bases = headings.iter().rev().find(|(_, b)| !b.is_empty());
        bases_at.push(bases.map(|(_, b)| b.clone()).unwrap_or_default());
    }
    let mut push = |first: usize, block: &str, row_folder: Option<String>| {
        let mut end_of_previous = 0;
        for (start, end, text) in code_spans(block) {
            let line = first + block[..start].matches('\n').count();
            out.push(Span {
                line: line + 1,
                text,
                before: block[end_of_previous..start].to_string(),
                bases: bases_at[line].clone(),
                row_folder: row_folder.clone(),
            });
            end_of_previous = end;
        }
    };
    let mut paragraph: Option<(usize, String)> = None;
    for (i, line) in lines.iter().enumerate() {
        let table = line.trim_start().starts_with('|');
        let heading = heading_level(line).is_some();
        if table || heading || line.trim().is_empty() {
            if let Some((first, text)) = paragraph.take() {
                push(first, &text, None);
            }
        }
        if table {
            let cells = split_cells(line);
            // The folder a row is about: its first or second cell is one.
            let row_folder = cells
                .iter()
                .filter(|c| !c.trim().is_empty())
                .take(2)
                .map(|c| code_spans(c))
                .filter(|s| s.len() == 1)
                .map(|s| s[0].2.clone())
                .find(|s| {
                    s.ends_with('/') || (s.starts_with("crates/") && s.matches('/').count() == 1)
                })
                .map(|s| s.trim_end_matches('/').to_string());
            for cell in cells {
                push(i, &cell, row_folder.clone());
            }
        } else if heading {
            push(i, line, None);
        } else if !line.trim().is_empty() {
            match &mut paragraph {
                Some((_, text)) => {
                    text.push('\n');
                    text.push_str(line);
                }
                None => paragraph = Some((i, line.to_string())),
            }
        }
    }
    if let Some((first, text)) = paragraph {
        push(first, &text, None);
    }
    out
}

/// The level of a Markdown heading (`## …`: 2).
fn heading_level(line: &str) -> Option<usize> {
    let level = line.chars().take_while(|c| *c == '#').count();
    (level > 0 && line[level..].starts_with(' ')).then_some(level)
}

/// A table row's cells, split at `|` not escaped as `\|`.
fn split_cells(row: &str) -> Vec<String> {
    let mut cells = vec![String::new()];
    let mut chars = row.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'|') => {
                cells.last_mut().unwrap().push_str("\\|");
                chars.next();
            }
            '|' => cells.push(String::new()),
            c => cells.last_mut().unwrap().push(c),
        }
    }
    cells
}

/// The code spans of one block: (start, end, text) with start and end the
/// byte offsets of the opening and after the closing backticks.
fn code_spans(block: &str) -> Vec<(usize, usize, String)> {
    let bytes = block.as_bytes();
    let run = |at: usize| bytes[at..].iter().take_while(|b| **b == b'`').count();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'`' {
            i += 1;
            continue;
        }
        let n = run(i);
        let mut j = i + n;
        let mut close = None;
        while j < bytes.len() {
            if bytes[j] == b'`' {
                let m = run(j);
                if m == n {
                    close = Some(j);
                    break;
                }
                j += m;
            } else {
                j += 1;
            }
        }
        match close {
            Some(j) => {
                let mut text = block[i + n..j].replace('\n', " ");
                if text.len() >= 2
                    && text.starts_with(' ')
                    && text.ends_with(' ')
                    && !text.trim().is_empty()
                {
                    text = text[1..text.len() - 1].to_string();
                }
                out.push((i, j + n, text.replace("\\|", "|")));
                i = j + n;
            }
            None => i += n,
        }
    }
    out
}

/// A Rust path at the start of `span` and what follows it: call arguments,
/// a field's or variant's braces, generics, a return type or an assignment.
/// `None` when anything else follows (an expression, a command).
fn rust_path(span: &str) -> Option<Vec<String>> {
    let mut segments = Vec::new();
    let mut rest = span;
    loop {
        let end = rest.find(|c: char| !is_ident_char(c)).unwrap_or(rest.len());
        if !is_ident(&rest[..end]) {
            return None;
        }
        segments.push(rest[..end].to_string());
        rest = &rest[end..];
        match rest.strip_prefix("::") {
            Some(r) if r.starts_with(|c: char| c == '_' || c.is_ascii_alphabetic()) => rest = r,
            Some(r) => {
                rest = r;
                break;
            }
            None => break,
        }
    }
    let rest = rest.strip_prefix('!').unwrap_or(rest);
    let rest = rest.split(" -> ").next().unwrap();
    let rest = rest.split(" = ").next().unwrap();
    let rest = rest.trim_start();
    let closed = |open: char, close: char| {
        rest.starts_with(open) && rest.ends_with(close) && {
            // The group that opens is the one that closes at the end.
            let mut depth = 0;
            rest.char_indices().all(|(i, c)| {
                if c == open {
                    depth += 1;
                } else if c == close {
                    depth -= 1;
                }
                depth > 0 || i == rest.len() - 1
            })
        }
    };
    (rest.is_empty() || closed('(', ')') || closed('{', '}') || closed('<', '>'))
        .then_some(segments)
}

fn classify(span: &str, before: &str, previous: Option<&'static str>, repo: &Repo) -> Class {
    const C_API: &str = "C, HSA or HIP API name";
    const ENV: &str = "environment variable or C constant";
    let s = span.trim();
    if s.is_empty() {
        return Class::Skip("empty");
    }
    if NOT_REFERENCES.iter().any(|(r, _)| *r == s) {
        return Class::Skip("not a reference (NOT_REFERENCES)");
    }
    // The `/`-joined tail of an API name: `hipHostRegister`/`Unregister`.
    if before == "/" && matches!(previous, Some(C_API) | Some(ENV)) && is_ident(s) {
        return Class::Skip(previous.unwrap());
    }
    if s.contains("://") {
        return Class::Skip("URL");
    }
    if s.starts_with(['$', '~']) {
        return Class::Skip("environment or home path");
    }
    if s.starts_with('/') || s.starts_with('#') {
        return Class::Skip("absolute path, comment or attribute");
    }
    if ["SOFTGPU_", "HSA_", "HIP_"]
        .iter()
        .any(|p| s.starts_with(p))
    {
        return Class::Skip(ENV);
    }
    let hip = s.strip_prefix("hip").is_some_and(|r| {
        r.starts_with(|c: char| c.is_ascii_uppercase() || c == '_') || r.starts_with("rtc")
    });
    if hip
        || ["hsa_", "__", "_Z", "amd_dbgapi"]
            .iter()
            .any(|p| s.starts_with(p))
    {
        return Class::Skip(C_API);
    }
    let head = s.split(['/', '(', '*', '{', ' ', '…']).next().unwrap();
    if MNEMONIC_PREFIXES.iter().any(|p| head.starts_with(p))
        && repo
            .mnemonics
            .range(head.to_string()..)
            .next()
            .is_some_and(|m| m.starts_with(head))
    {
        return Class::Skip("instruction mnemonic");
    }
    if s.starts_with("clippy::") {
        return Class::Skip("lint");
    }
    // `file.rs::name`, `file.rs::tests::name`.
    if let Some((file, names)) = s.split_once(".rs::") {
        let names: Vec<String> = names.split("::").map(str::to_string).collect();
        if names.iter().all(|n| is_ident(n))
            && file.chars().all(|c| is_ident_char(c) || "/.-*".contains(c))
        {
            return Class::Check(vec![Reference::Test(format!("{file}.rs"), names)]);
        }
    }
    let looks_like_file = s.contains('/') || EXTENSIONS.iter().any(|e| s.ends_with(e));
    if looks_like_file
        && !s.contains("::")
        && !s.contains(|c: char| c.is_whitespace() || "=|\\<>,;".contains(c))
    {
        let placeholder = s
            .split(|c: char| !c.is_ascii_alphanumeric())
            .any(|w| PLACEHOLDERS.contains(&w));
        if placeholder {
            return Class::Skip("path with a placeholder");
        }
        return Class::Check(vec![Reference::Path(s.to_string())]);
    }
    // `Arena::rmw_u32/u64`: the first of the alternatives.
    let s = match s.split_once('/') {
        Some((first, _)) if s.contains("::") && !s.contains(' ') => first,
        _ => s,
    };
    // `KernelFault::{kind, allocation, argument}`.
    if let Some((path, list)) = s.split_once("::{") {
        if let (Some(prefix), Some(list)) = (rust_path(path), list.strip_suffix('}')) {
            let names: Vec<&str> = list.split(',').map(str::trim).collect();
            if names.iter().all(|n| is_ident(n)) {
                let refs = names
                    .iter()
                    .map(|n| {
                        let mut segments = prefix.clone();
                        segments.push(n.to_string());
                        Reference::Symbol(segments)
                    })
                    .collect();
                return Class::Check(refs);
            }
        }
    }
    if s.starts_with("softgpu-") && s.chars().all(|c| c.is_ascii_lowercase() || c == '-') {
        return Class::Check(vec![Reference::Package(s.to_string())]);
    }
    let Some(segments) = rust_path(s) else {
        return match s.contains('-') && !s.contains(' ') {
            true => Class::Skip("tool, package or label"),
            false => Class::Skip("code or command"),
        };
    };
    if segments.len() > 1 {
        return Class::Check(vec![Reference::Symbol(segments)]);
    }
    let name = &segments[0];
    if STD.contains(&name.as_str()) {
        return Class::Skip("standard library");
    }
    let upper = name.starts_with(|c: char| c.is_ascii_uppercase());
    let has_lower = name.contains(|c: char| c.is_ascii_lowercase());
    let has_upper = name.contains(|c: char| c.is_ascii_uppercase());
    let reference = if name.len() == 1 {
        return Class::Skip("single word");
    } else if upper && has_lower {
        Reference::Symbol(segments)
    } else if upper {
        Reference::Constant(name.clone())
    } else if has_upper {
        return Class::Skip(C_API);
    } else if name.trim_matches('_').contains('_') {
        Reference::Name(name.clone())
    } else {
        return Class::Skip("single word");
    };
    Class::Check(vec![reference])
}

#[test]
fn every_reference_in_the_docs_resolves() {
    let repo = Repo::load();
    let mut stale = Vec::new();
    let mut checked: BTreeMap<&str, usize> = BTreeMap::new();
    let mut skipped: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
    for doc in DOCS {
        let path = repo.root.join(doc);
        let text = fs::read_to_string(&path).unwrap_or_else(|e| {
            panic!("{doc} cannot be read ({e}): the docs this test holds true are gone")
        });
        let mut previous = None;
        let mut in_doc = 0;
        for span in spans(&text) {
            let context = Context {
                bases: span.bases,
                row_folder: span.row_folder,
            };
            match classify(&span.text, &span.before, previous, &repo) {
                Class::Skip(why) => {
                    skipped.entry(why).or_default().insert(span.text.clone());
                    previous = Some(why);
                }
                Class::Check(references) => {
                    previous = None;
                    for reference in references {
                        *checked.entry(reference.kind()).or_default() += 1;
                        in_doc += 1;
                        if let Err(why) = repo.check(&reference, &context) {
                            stale.push(format!("{doc}:{}: `{}`: {why}", span.line, span.text));
                        }
                    }
                }
            }
        }
        assert!(
            in_doc > 100,
            "{doc}: only {in_doc} references found: is the parser broken?"
        );
    }
    println!("checked, by kind: {checked:?}");
    for (why, spans) in &skipped {
        let list: Vec<&str> = spans.iter().map(String::as_str).collect();
        println!("skipped ({why}, {}): {}", list.len(), list.join(" | "));
    }
    for kind in ["path", "test", "symbol", "name", "constant", "package"] {
        assert!(
            checked.contains_key(kind),
            "no {kind} references found: is the classifier broken?"
        );
    }
    assert!(
        stale.is_empty(),
        "{} stale references in the docs (the code is the truth: correct the document):\n{}",
        stale.len(),
        stale.join("\n")
    );
}

/// The checker itself: it tells a stale reference from a true one, and
/// sorts spans as the documents use them.
#[test]
fn the_checker_tells_stale_from_true() {
    let repo = Repo::load();
    let anywhere = Context {
        bases: vec![],
        row_folder: None,
    };
    let executor = Context {
        bases: vec!["crates/exec".into()],
        row_folder: None,
    };
    let strs = |s: &[&str]| s.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let this = THIS;
    let true_ones = [
        (Reference::Path(this.into()), &anywhere),
        (
            Reference::Path("test-support/tests/docs.rs".into()),
            &anywhere,
        ),
        (Reference::Path("docs.rs".into()), &anywhere),
        (Reference::Path("crates/isa/src/decode/".into()), &anywhere),
        (Reference::Path("crates/*/tests/*.rs".into()), &anywhere),
        (
            Reference::Test(this.into(), strs(&["the_checker_tells_stale_from_true"])),
            &anywhere,
        ),
        (
            Reference::Symbol(strs(&["softgpu_arena", "Arena"])),
            &anywhere,
        ),
        (Reference::Symbol(strs(&["arena", "shadow"])), &anywhere),
        (Reference::Symbol(strs(&["Arena"])), &anywhere),
        (Reference::Symbol(strs(&["Op", "V_ADD_F32"])), &anywhere),
        (Reference::Name("fill_u32".into()), &anywhere),
        (Reference::Package("softgpu-arena".into()), &anywhere),
    ];
    for (reference, context) in true_ones {
        assert_eq!(repo.check(&reference, context), Ok(()), "{reference:?}");
    }
    let stale_ones = [
        (
            Reference::Path("crates/isa/src/decode.rs".into()),
            &anywhere,
        ),
        (Reference::Path("exec/src/ops/valu.rs".into()), &anywhere),
        (Reference::Path("docs.rs".into()), &executor),
        (
            Reference::Test(this.into(), strs(&["no_such_test"])),
            &anywhere,
        ),
        (
            Reference::Test("crates/arena/tests/none.rs".into(), strs(&["x"])),
            &anywhere,
        ),
        (
            Reference::Symbol(strs(&["exec", "arena", "Arena"])),
            &anywhere,
        ),
        (
            Reference::Symbol(strs(&["softgpu_arena", "NoSuchType"])),
            &anywhere,
        ),
        (
            Reference::Symbol(strs(&["Arena", "no_such_member"])),
            &anywhere,
        ),
        (Reference::Symbol(strs(&["no_such_module", "x"])), &anywhere),
        (
            Reference::Symbol(strs(&["arena", "shadow", "Arena"])),
            &anywhere,
        ),
        (Reference::Symbol(strs(&["Op", "V_NO_SUCH_OP"])), &anywhere),
        (Reference::Name("no_such_name_anywhere".into()), &anywhere),
        (Reference::Package("softgpu-nothing".into()), &anywhere),
    ];
    for (reference, context) in stale_ones {
        assert!(
            repo.check(&reference, context).is_err(),
            "{reference:?} resolved"
        );
    }
    let kind = |span: &str| match classify(span, "", None, &repo) {
        Class::Skip(why) => why.to_string(),
        Class::Check(refs) => refs
            .iter()
            .map(Reference::kind)
            .collect::<Vec<_>>()
            .join(","),
    };
    assert_eq!(kind("exec/tests/isa_exec.rs"), "path");
    assert_eq!(
        kind("isa_exec.rs::graphics_instructions_fault_as_unsupported"),
        "test"
    );
    assert_eq!(kind("Jit::of"), "symbol");
    assert_eq!(
        kind("Device::dispatch(program, kernel, launch, args)"),
        "symbol"
    );
    assert_eq!(kind("KernelFault::{kind, allocation}"), "symbol,symbol");
    assert_eq!(kind("run_wave"), "name");
    assert_eq!(kind("EAGER_TEXT_BYTES"), "constant");
    assert_eq!(kind("softgpu-exec"), "package");
    assert_eq!(kind("v_add_f32"), "instruction mnemonic");
    assert_eq!(kind("s_waitcnt*"), "instruction mnemonic");
    assert_eq!(
        kind("SOFTGPU_JIT=verify"),
        "environment variable or C constant"
    );
    assert_eq!(kind("hipMalloc"), "C, HSA or HIP API name");
    assert_eq!(kind("hsa_queue_create"), "C, HSA or HIP API name");
    assert_eq!(kind("softgpu run --stats"), "code or command");
    assert_eq!(kind("decode/FAMILY.rs"), "path with a placeholder");
}
