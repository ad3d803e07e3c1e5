//! The executor's layering, checked: the crates run arena ← interpreter ←
//! JIT ← machine and never back, and the top-level modules inside each of
//! them form no cycle (docs/ARCHITECTURE.md, "Crates"). A new `use` that
//! closes a cycle fails here with the cycle spelled out, so the fix (pass
//! what the module needs, or move the type down a layer) is made when the
//! edge is written, not in a later clean-up.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The layers, lowest first: each crate may depend on those before it only.
const LAYERS: [(&str, &str); 4] = [
    ("arena", "softgpu-arena"),
    ("interp", "softgpu-interp"),
    ("jit", "softgpu-jit"),
    ("exec", "softgpu-exec"),
];

fn crates_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

#[test]
fn crates_depend_only_on_lower_layers() {
    for (i, (dir, _)) in LAYERS.iter().enumerate() {
        let manifest = fs::read_to_string(crates_dir().join(dir).join("Cargo.toml")).unwrap();
        let deps = manifest
            .split("[dependencies]")
            .nth(1)
            .unwrap_or("")
            .split("\n[")
            .next()
            .unwrap_or("");
        for (j, (_, name)) in LAYERS.iter().enumerate() {
            let named = deps
                .lines()
                .any(|l| l.trim_start().starts_with(&format!("{name}.")));
            assert!(
                !(named && j >= i),
                "crates/{dir} depends on {name}, which is not below it (layers, lowest first: {:?})",
                LAYERS.map(|(_, n)| n)
            );
        }
    }
}

#[test]
fn no_module_cycles_inside_the_executor_crates() {
    let mut problems = Vec::new();
    for (dir, name) in LAYERS {
        let src = crates_dir().join(dir).join("src");
        let graph = module_graph(&src, &mut problems);
        assert!(!graph.is_empty(), "{name}: no modules found under {src:?}");
        if let Some(cycle) = find_cycle(&graph) {
            problems.push(format!("{name}: module cycle {}", cycle.join(" → ")));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Each top-level module of the crate at `src` and the top-level modules
/// its code names through `crate::module`. Unit tests are not the
/// module's code (a test may drive the whole crate): a `tests.rs` file and
/// everything from a `#[cfg(test)] mod` to the end of a file are left out.
/// A path through the crate root (`crate::Item`, `crate::{…}`) hides which
/// module it reaches, so it is a problem outside `lib.rs`.
fn module_graph(src: &Path, problems: &mut Vec<String>) -> BTreeMap<String, BTreeSet<String>> {
    let mut modules: BTreeMap<String, Vec<PathBuf>> = BTreeMap::new();
    for entry in fs::read_dir(src).unwrap() {
        let path = entry.unwrap().path();
        let stem = path.file_stem().unwrap().to_string_lossy().to_string();
        if path.is_dir() {
            modules.entry(stem).or_default().extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") && stem != "lib" {
            modules.entry(stem).or_default().push(path);
        }
    }
    let names: BTreeSet<String> = modules.keys().cloned().collect();
    let mut graph = BTreeMap::new();
    for (module, files) in &modules {
        let mut edges = BTreeSet::new();
        for file in files.iter().filter(|f| !f.ends_with("tests.rs")) {
            let text = fs::read_to_string(file).unwrap();
            let lines: Vec<&str> = text.lines().collect();
            let code_end = (0..lines.len())
                .find(|&i| {
                    lines[i].trim() == "#[cfg(test)]"
                        && lines
                            .get(i + 1)
                            .is_some_and(|l| l.trim_start().starts_with("mod "))
                })
                .unwrap_or(lines.len());
            for (line_no, line) in lines[..code_end].iter().enumerate() {
                let code = line.split("//").next().unwrap_or("");
                for rest in code.split("crate::").skip(1) {
                    let word: String = rest
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect();
                    if names.contains(&word) {
                        if &word != module {
                            edges.insert(word);
                        }
                    } else if rest.starts_with('{') || word.starts_with(|c: char| c.is_uppercase())
                    {
                        problems.push(format!(
                            "{}:{}: a path through the crate root (`crate::{}`): name the module",
                            file.display(),
                            line_no + 1,
                            rest.chars().take(30).collect::<String>()
                        ));
                    }
                }
            }
        }
        graph.insert(module.clone(), edges);
    }
    graph
}

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    out
}

/// A cycle of the graph, as the modules along it and the first again.
fn find_cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    // Depth-first, colouring: on the current path, or finished.
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|n| n == node) {
            let mut cycle = path[at..].to_vec();
            cycle.push(node.to_string());
            return Some(cycle);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_string());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(cycle) = visit(next, graph, path, done) {
                return Some(cycle);
            }
        }
        path.pop();
        done.insert(node.to_string());
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|node| visit(node, graph, &mut Vec::new(), &mut done))
}

#[test]
fn the_check_finds_a_cycle() {
    let graph: BTreeMap<String, BTreeSet<String>> = [
        ("a", vec!["b"]),
        ("b", vec!["c"]),
        ("c", vec!["a"]),
        ("d", vec![]),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.into_iter().map(String::from).collect()))
    .collect();
    assert_eq!(
        find_cycle(&graph),
        Some(vec!["a".into(), "b".into(), "c".into(), "a".into()])
    );
    let acyclic: BTreeMap<String, BTreeSet<String>> = [("a", vec!["b"]), ("b", vec![])]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.into_iter().map(String::from).collect()))
        .collect();
    assert_eq!(find_cycle(&acyclic), None);
}
