//! Code object readers, executables and their symbols.
//!
//! Loading a code object for an agent places its image in device memory and
//! decodes it once (an executor [`Program`]). Freezing an executable
//! publishes its kernels by kernel object (the descriptor's address), which
//! is how a dispatch packet names the kernel it runs.

use std::sync::{Arc, Mutex};

use softgpu_codeobj::SymbolKind as ElfSymbolKind;
use softgpu_exec::{DispatchError, Program};

use crate::error::{invalid, Error, Result};
use crate::runtime::Runtime;

/// A code object's bytes, read from memory or a file.
pub struct CodeObjectReader {
    pub bytes: Arc<Vec<u8>>,
    /// Where it came from (for traces and captures).
    pub origin: String,
}

/// An executable: code objects loaded for agents, then frozen.
pub struct Executable {
    state: Mutex<ExecutableState>,
}

#[derive(Default)]
struct ExecutableState {
    frozen: bool,
    /// Loaded code objects with the agent each was loaded for.
    loaded: Vec<(usize, Arc<Program>, Arc<CodeObjectReader>)>,
    /// Symbol handles, in definition order.
    symbols: Vec<u64>,
}

/// What a symbol names.
#[derive(Clone)]
pub enum SymbolKind {
    Kernel(KernelRef),
    Variable {
        address: u64,
        size: u64,
        /// Defined by the client (`agent_global_variable_define`).
        external: bool,
    },
}

/// One symbol of an executable.
pub struct Symbol {
    /// Name as HSA reports it (`NAME.kd` for kernels).
    pub name: String,
    /// Agent index the symbol belongs to.
    pub agent: usize,
    pub global: bool,
    pub kind: SymbolKind,
}

/// A code object loaded into an executable for one agent (what the AMD
/// loader extension reports).
#[derive(Clone)]
pub struct LoadedCodeObject {
    /// Agent index it was loaded for.
    pub agent: usize,
    pub program: Arc<Program>,
    pub reader: Arc<CodeObjectReader>,
}

/// A kernel ready to dispatch.
#[derive(Clone)]
pub struct KernelRef {
    pub program: Arc<Program>,
    /// Index into the program's kernels.
    pub index: usize,
    /// Agent index it was loaded for.
    pub agent: usize,
    /// The code object's bytes (for dispatch capture).
    pub reader: Arc<CodeObjectReader>,
}

impl KernelRef {
    pub fn kernel(&self) -> &softgpu_codeobj::Kernel {
        &self.program.code_object.kernels[self.index]
    }

    /// The kernel object: the device address of its descriptor.
    pub fn object(&self) -> u64 {
        self.program.image_base + self.kernel().descriptor_offset
    }
}

impl Runtime {
    /// Makes a reader over a copy of `bytes`.
    pub fn reader_from_memory(&self, bytes: &[u8], origin: &str) -> Result<u64> {
        if bytes.is_empty() {
            return Err(invalid("empty code object"));
        }
        Ok(self.readers.insert(Arc::new(CodeObjectReader {
            bytes: Arc::new(bytes.to_vec()),
            origin: origin.into(),
        })))
    }

    pub fn create_executable(&self) -> u64 {
        self.executables.insert(Arc::new(Executable {
            state: Mutex::new(ExecutableState::default()),
        }))
    }

    /// Loads the reader's code object for a GPU agent.
    pub fn load_code_object(&self, executable: u64, agent: u64, reader: u64) -> Result<()> {
        self.load_agent_code_object(executable, agent, reader)
            .map(|_| ())
    }

    /// Loads the reader's code object for a GPU agent and returns the
    /// device address its image was placed at, which identifies the
    /// loaded code object among the executable's
    /// ([`Runtime::loaded_code_objects`]).
    pub fn load_agent_code_object(&self, executable: u64, agent: u64, reader: u64) -> Result<u64> {
        let exe = self.executables.get(executable)?;
        let agent = self.agent(agent)?;
        let reader = self.readers.get(reader)?;
        let mut state = exe.lock();
        if state.frozen {
            return Err(Error::FrozenExecutable);
        }
        let program = agent
            .device()?
            .load_as(&reader.bytes, "hsa_executable_load_agent_code_object")
            .map_err(|e| match e {
                // Built for another GPU: no code for this agent.
                DispatchError::CodeObject(
                    e @ (softgpu_codeobj::Error::TargetMismatch { .. }
                    | softgpu_codeobj::Error::NoBundleEntry { .. }),
                ) => Error::IncompatibleCodeObject(e),
                DispatchError::CodeObject(e) => Error::CodeObject(e),
                other => Error::from(other),
            })?;
        let program = Arc::new(program);
        for (index, k) in program.code_object.kernels.iter().enumerate() {
            let kernel = KernelRef {
                program: program.clone(),
                index,
                agent: agent.index,
                reader: reader.clone(),
            };
            state.symbols.push(self.symbols.insert(Arc::new(Symbol {
                name: k.symbol.clone(),
                agent: agent.index,
                global: true,
                kind: SymbolKind::Kernel(kernel),
            })));
        }
        let kernel_symbols: std::collections::HashSet<&str> = program
            .code_object
            .kernels
            .iter()
            .map(|k| k.symbol.as_str())
            .collect();
        for s in &program.code_object.symbols {
            let variable = s.kind == ElfSymbolKind::Object && s.defined;
            if variable && !kernel_symbols.contains(&s.name.as_str()) {
                state.symbols.push(self.symbols.insert(Arc::new(Symbol {
                    name: s.name.clone(),
                    agent: agent.index,
                    global: s.global,
                    kind: SymbolKind::Variable {
                        address: program.image_base + s.value,
                        size: s.size,
                        external: false,
                    },
                })));
            }
        }
        let image_base = program.image_base;
        state.loaded.push((agent.index, program, reader));
        Ok(image_base)
    }

    /// The code objects loaded into an executable, in load order.
    pub fn loaded_code_objects(&self, executable: u64) -> Result<Vec<LoadedCodeObject>> {
        let exe = self.executables.get(executable)?;
        let state = exe.lock();
        Ok(state
            .loaded
            .iter()
            .map(|(agent, program, reader)| LoadedCodeObject {
                agent: *agent,
                program: program.clone(),
                reader: reader.clone(),
            })
            .collect())
    }

    /// The live executable one of whose loaded images holds device
    /// address `addr`.
    pub fn executable_containing(&self, addr: u64) -> Option<u64> {
        self.executables
            .all()
            .into_iter()
            .find_map(|(handle, exe)| {
                let state = exe.lock();
                state
                    .loaded
                    .iter()
                    .any(|(_, p, _)| {
                        addr >= p.image_base && addr - p.image_base < p.code_object.image.size
                    })
                    .then_some(handle)
            })
    }

    /// The live executable a symbol handle belongs to.
    pub fn symbol_executable(&self, symbol: u64) -> Option<u64> {
        self.executables
            .all()
            .into_iter()
            .find_map(|(handle, exe)| exe.lock().symbols.contains(&symbol).then_some(handle))
    }

    /// Defines a variable the code objects may refer to. Code objects
    /// here resolve their own relocations at load, so an undefined external
    /// symbol cannot be bound afterwards: this records the definition for
    /// symbol queries only.
    pub fn define_variable(
        &self,
        executable: u64,
        agent: u64,
        name: &str,
        address: u64,
    ) -> Result<()> {
        let exe = self.executables.get(executable)?;
        let agent = self.agent(agent)?;
        let mut state = exe.lock();
        if state.frozen {
            return Err(Error::FrozenExecutable);
        }
        if self
            .find_symbol_in(&state, name, Some(agent.index))
            .is_some()
        {
            return Err(Error::VariableAlreadyDefined(name.into()));
        }
        state.symbols.push(self.symbols.insert(Arc::new(Symbol {
            name: name.into(),
            agent: agent.index,
            global: true,
            kind: SymbolKind::Variable {
                address,
                size: 0,
                external: true,
            },
        })));
        Ok(())
    }

    /// Freezes the executable and publishes its kernels for dispatch.
    pub fn freeze(&self, executable: u64) -> Result<()> {
        let exe = self.executables.get(executable)?;
        let mut state = exe.lock();
        if state.frozen {
            return Err(Error::FrozenExecutable);
        }
        state.frozen = true;
        let mut kernels = self.kernels.write().unwrap_or_else(|e| e.into_inner());
        for h in &state.symbols {
            if let Ok(sym) = self.symbols.get(*h) {
                if let SymbolKind::Kernel(k) = &sym.kind {
                    kernels.insert(k.object(), k.clone());
                }
            }
        }
        Ok(())
    }

    pub fn is_frozen(&self, executable: u64) -> Result<bool> {
        Ok(self.executables.get(executable)?.lock().frozen)
    }

    /// Destroys an executable: its symbols become stale, its kernels
    /// undispatchable and its images are freed.
    pub fn destroy_executable(&self, executable: u64) -> Result<()> {
        let exe = self.executables.remove(executable)?;
        let state = std::mem::take(&mut *exe.lock());
        let mut kernels = self.kernels.write().unwrap_or_else(|e| e.into_inner());
        for h in state.symbols {
            if let Ok(sym) = self.symbols.remove(h) {
                if let SymbolKind::Kernel(k) = &sym.kind {
                    kernels.remove(&k.object());
                }
            }
        }
        drop(kernels);
        for (_, program, _) in state.loaded {
            let _ = self
                .arena
                .free_by(program.image_base, "hsa_executable_destroy");
        }
        Ok(())
    }

    /// A symbol by name; `agent` narrows to one agent's symbols.
    pub fn symbol_by_name(&self, executable: u64, name: &str, agent: Option<u64>) -> Result<u64> {
        let exe = self.executables.get(executable)?;
        let agent = agent.map(|a| self.agent(a)).transpose()?.map(|a| a.index);
        let state = exe.lock();
        self.find_symbol_in(&state, name, agent)
            .ok_or_else(|| Error::InvalidSymbolName(name.into()))
    }

    fn find_symbol_in(
        &self,
        state: &ExecutableState,
        name: &str,
        agent: Option<usize>,
    ) -> Option<u64> {
        state.symbols.iter().copied().find(|h| {
            self.symbols
                .get(*h)
                .is_ok_and(|s| s.name == name && agent.is_none_or(|a| a == s.agent))
        })
    }

    /// Every symbol handle of an executable (optionally one agent's).
    pub fn executable_symbols(&self, executable: u64, agent: Option<u64>) -> Result<Vec<u64>> {
        let exe = self.executables.get(executable)?;
        let agent = agent.map(|a| self.agent(a)).transpose()?.map(|a| a.index);
        let state = exe.lock();
        Ok(state
            .symbols
            .iter()
            .copied()
            .filter(|h| {
                self.symbols
                    .get(*h)
                    .is_ok_and(|s| agent.is_none_or(|a| a == s.agent))
            })
            .collect())
    }

    /// The kernel a dispatch packet's kernel object names.
    pub fn kernel_by_object(&self, object: u64) -> Option<KernelRef> {
        let kernels = self.kernels.read().unwrap_or_else(|e| e.into_inner());
        kernels.get(&object).cloned()
    }
}

impl Executable {
    fn lock(&self) -> std::sync::MutexGuard<'_, ExecutableState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}
