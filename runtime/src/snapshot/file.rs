//! The save container: how a snapshot's parts lie in a file.
//!
//! ```text
//! offset  size   what
//! 0       8      magic: b"SLUICESV"
//! 8       4      format version, u32 little-endian (FORMAT_VERSION)
//! 12      4      section count, u32 little-endian
//! 16      ...    the sections, one after the other, each:
//!                  1      kind (SectionKind as u8)
//!                  2      name length n, u16 little-endian
//!                  n      name, UTF-8: the name the part was registered under
//!                  8      payload length p, u64 little-endian
//!                  p      payload: the part's postcard encoding
//! end-8   8      xxh3-64 (seed 0) of every byte before it, u64 little-endian
//! ```
//!
//! Every section names what it holds, so a reader knows each type by the
//! name it was saved under before decoding anything. Parsing validates the
//! whole container before a payload is decoded: the magic, the version, the
//! trailing checksum (a truncated input is told apart from a corrupted one
//! by walking the sections' lengths), then each section's bounds. A length
//! is only ever compared with what is left of the input, never used to
//! reserve memory, so a forged length cannot make the reader allocate.

use std::fmt;
use std::io::Write;
use std::panic::{AssertUnwindSafe, catch_unwind};

use xxhash_rust::xxh3::{Xxh3, xxh3_64};

/// The first bytes of every save.
pub(crate) const MAGIC: [u8; 8] = *b"SLUICESV";

/// The version of the container and of the sections' encodings that this
/// build writes and reads. Bumped whenever either changes.
pub const FORMAT_VERSION: u32 = 1;

/// Bytes before the first section: magic, version, section count.
const HEADER_LEN: usize = 16;
/// Bytes of the trailing checksum.
const TRAILER_LEN: usize = 8;

/// What one section of a save holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum SectionKind {
    /// The entity store's bookkeeping: the id allocator, the archetypes
    /// (which saved components each has) and their rows' entity ids.
    Entities,
    /// One component's values, archetype by archetype, in row order.
    Component,
    /// One service's value.
    Service,
    /// The world's clocks.
    Clocks,
    /// The saved [`Local`](crate::Local) values, each by its node's
    /// instance key and its position among that node's locals
    /// ([`World::save_local`](crate::World::save_local)).
    Locals,
    /// One script store's layout and step scripts
    /// ([`World::save_scripts`](crate::World::save_scripts)).
    Scripts,
}

impl SectionKind {
    fn to_byte(self) -> u8 {
        match self {
            SectionKind::Entities => 1,
            SectionKind::Component => 2,
            SectionKind::Service => 3,
            SectionKind::Clocks => 4,
            SectionKind::Locals => 5,
            SectionKind::Scripts => 6,
        }
    }

    fn from_byte(byte: u8) -> Option<Self> {
        Some(match byte {
            1 => SectionKind::Entities,
            2 => SectionKind::Component,
            3 => SectionKind::Service,
            4 => SectionKind::Clocks,
            5 => SectionKind::Locals,
            6 => SectionKind::Scripts,
            _ => return None,
        })
    }
}

impl fmt::Display for SectionKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SectionKind::Entities => "entities",
            SectionKind::Component => "component",
            SectionKind::Service => "service",
            SectionKind::Clocks => "clocks",
            SectionKind::Locals => "local",
            SectionKind::Scripts => "scripts",
        })
    }
}

/// Why a snapshot could not be written as a save. Whatever had been
/// written before the error is not a valid save (it has no trailing
/// checksum), and the world and the snapshot are unchanged.
#[derive(Debug)]
#[non_exhaustive]
pub enum SaveError {
    /// The writer failed.
    Io(std::io::Error),
    /// A value's `Serialize` returned an error.
    Encode {
        /// What the section holds.
        kind: SectionKind,
        /// The name the part is saved under.
        name: String,
        /// The encoder's message.
        reason: String,
    },
    /// A value's `Serialize` panicked; the panic was caught.
    Panicked {
        /// What the section holds.
        kind: SectionKind,
        /// The name the part is saved under.
        name: String,
        /// The panic's message, when it was a string.
        message: String,
    },
    /// A save name longer than 65,535 bytes, or more than `u32::MAX`
    /// sections.
    TooLarge {
        /// What was too large.
        what: String,
    },
    /// The snapshot holds nothing (new, or its capture failed).
    Empty,
    /// The world's registrations for saving conflict (a name given to two
    /// types, or a type given two names, through
    /// [`World::save_component`](crate::World::save_component)); the
    /// first registration of each was kept, and nothing is saved until the
    /// conflict is gone.
    Registration {
        /// The conflicts, each naming both sides.
        conflicts: Vec<String>,
    },
    /// Component types with rows in the world are not registered for
    /// saving, or were left out of the snapshot (not opted in), or a
    /// saved script store ([`World::save_scripts`](crate::World::save_scripts))
    /// holds scripts of types not registered
    /// ([`World::save_step_script`](crate::World::save_step_script)):
    /// a save without them could not give the world back.
    NotSaved {
        /// Their type names (a script's as `its type (a script in the
        /// store's type)`).
        names: Vec<String>,
    },
    /// A saved script store holds a step script waiting on
    /// [`Wait::Until`](crate::script::Wait::Until) whose state does not
    /// give its condition back
    /// ([`StepScript::resume_wait`](crate::script::StepScript::resume_wait)):
    /// a function pointer cannot be saved.
    UnsavedCondition {
        /// The store's type name.
        store: String,
        /// The script's name.
        script: String,
        /// The script's type name.
        type_name: &'static str,
    },
    /// A saved [`ComponentRef<T>`](crate::ComponentRef) was made in
    /// another world's store ([`ComponentRef::new`](crate::ComponentRef::new)
    /// given another world): it reads nothing in its holder's world, and
    /// its saved form (its target's id) would name this world's entity of
    /// that id once loaded. Make it in the holder's world.
    ForeignReference {
        /// The entity holding the reference.
        holder: crate::Entity,
        /// The other world's entity it names.
        target: crate::Entity,
        /// `T`'s type name.
        component: &'static str,
    },
    /// The snapshot holds a saved [`Local`](crate::Local) of a node whose
    /// instance key several registered nodes bore (a world that cannot
    /// plan, SL0004): a save names a local by its node's key, which would
    /// not tell them apart on load. Give one its own
    /// ([`NodeBuilder::key`](crate::NodeBuilder::key)).
    AmbiguousNode {
        /// The key (the node's name unless set).
        node: String,
        /// How many registered nodes bore it.
        count: usize,
    },
}

impl fmt::Display for SaveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SaveError::Io(error) => write!(f, "writing the save failed: {error}"),
            SaveError::Encode { kind, name, reason } => {
                write!(f, "encoding the {kind} `{name}` failed: {reason}")
            }
            SaveError::Panicked {
                kind,
                name,
                message,
            } => write!(
                f,
                "encoding the {kind} `{name}` panicked: {message}; nothing valid was written"
            ),
            SaveError::TooLarge { what } => write!(f, "cannot save: {what}"),
            SaveError::Empty => f.write_str("cannot save an empty snapshot"),
            SaveError::Registration { conflicts } => write!(
                f,
                "the world's registrations for saving conflict: {}",
                conflicts.join("; ")
            ),
            SaveError::NotSaved { names } => write!(
                f,
                "types in the world are not registered for saving (World::save_component, \
                 World::save_step_script): {}",
                names.join(", ")
            ),
            SaveError::UnsavedCondition {
                store,
                script,
                type_name,
            } => write!(
                f,
                "the script `{script}` (a {type_name} in {store}) waits on a condition its state \
                 does not give back (StepScript::resume_wait): a condition cannot be saved"
            ),
            SaveError::ForeignReference {
                holder,
                target,
                component,
            } => write!(
                f,
                "{holder}'s ComponentRef<{component}> was made in another world's store (to its \
                 {target}); it reads nothing here and cannot be saved"
            ),
            SaveError::AmbiguousNode { node, count } => write!(
                f,
                "cannot save the locals of the node `{node}`: {count} registered nodes have that \
                 instance key, and a save names a local by its node's key"
            ),
        }
    }
}

impl std::error::Error for SaveError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            SaveError::Io(error) => Some(error),
            _ => None,
        }
    }
}

impl From<std::io::Error> for SaveError {
    fn from(error: std::io::Error) -> Self {
        SaveError::Io(error)
    }
}

/// The text of a caught panic's payload.
pub(crate) fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(text) = payload.downcast_ref::<&str>() {
        (*text).to_owned()
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text.clone()
    } else {
        "a panic without a message".to_owned()
    }
}

/// Writes a save section by section. Each section's payload is encoded
/// into one reused buffer first (its length goes before it), so a failing
/// or panicking encoder leaves nothing of its section in the output.
pub(crate) struct SaveWriter<W: Write> {
    out: W,
    /// Hash of every byte written so far (the trailer).
    hasher: Xxh3,
    payload: Vec<u8>,
    /// Sections still to write (the count is in the header).
    remaining: u32,
}

impl<W: Write> SaveWriter<W> {
    /// Writes the header of a save of `sections` sections.
    pub(crate) fn start(out: W, sections: usize) -> Result<Self, SaveError> {
        let count = u32::try_from(sections).map_err(|_| SaveError::TooLarge {
            what: format!("{sections} sections (at most {})", u32::MAX),
        })?;
        let mut writer = SaveWriter {
            out,
            hasher: Xxh3::new(),
            payload: Vec::new(),
            remaining: count,
        };
        writer.put(&MAGIC)?;
        writer.put(&FORMAT_VERSION.to_le_bytes())?;
        writer.put(&count.to_le_bytes())?;
        Ok(writer)
    }

    fn put(&mut self, bytes: &[u8]) -> Result<(), SaveError> {
        self.hasher.update(bytes);
        self.out.write_all(bytes)?;
        Ok(())
    }

    /// Writes one section; `encode` appends its payload to the buffer it
    /// is given and returns the encoder's error, if any.
    pub(crate) fn section(
        &mut self,
        kind: SectionKind,
        name: &str,
        encode: impl FnOnce(&mut Vec<u8>) -> postcard::Result<()>,
    ) -> Result<(), SaveError> {
        let name_len = u16::try_from(name.len()).map_err(|_| SaveError::TooLarge {
            what: format!("the {kind} name `{name}` is over 65,535 bytes"),
        })?;
        assert!(self.remaining > 0, "more sections than announced");
        self.payload.clear();
        let mut payload = std::mem::take(&mut self.payload);
        let encoded = catch_unwind(AssertUnwindSafe(|| encode(&mut payload)));
        let result = match encoded {
            Ok(Ok(())) => Ok(()),
            Ok(Err(error)) => Err(SaveError::Encode {
                kind,
                name: name.to_owned(),
                reason: error.to_string(),
            }),
            Err(payload) => Err(SaveError::Panicked {
                kind,
                name: name.to_owned(),
                message: panic_message(&*payload),
            }),
        };
        if let Err(error) = result {
            self.payload = Vec::new();
            return Err(error);
        }
        self.put(&[kind.to_byte()])?;
        self.put(&name_len.to_le_bytes())?;
        self.put(name.as_bytes())?;
        self.put(&(payload.len() as u64).to_le_bytes())?;
        self.put(&payload)?;
        self.payload = payload;
        self.remaining -= 1;
        Ok(())
    }

    /// Writes the trailing checksum and flushes.
    pub(crate) fn finish(mut self) -> Result<W, SaveError> {
        assert_eq!(self.remaining, 0, "fewer sections than announced");
        let digest = self.hasher.digest();
        self.out.write_all(&digest.to_le_bytes())?;
        self.out.flush()?;
        Ok(self.out)
    }
}

/// Why a save could not be read. Loading changes nothing in the world
/// whatever the error.
#[derive(Debug)]
#[non_exhaustive]
pub enum LoadError {
    /// Reading the input failed.
    Io(std::io::Error),
    /// The input does not start with a save's magic bytes.
    NotASave {
        /// The input's first bytes (at most 8).
        found: Vec<u8>,
    },
    /// The save was written by another version of the format.
    Version {
        /// The version in the file.
        found: u32,
        /// The version this build reads.
        supported: u32,
    },
    /// The input ends before the save does.
    Truncated {
        /// The part being read: `header`, `section 3`, `checksum`...
        part: String,
        /// Byte offset where it starts.
        at: u64,
        /// Bytes it needs past `at`.
        needed: u64,
        /// Bytes the input has past `at`.
        available: u64,
    },
    /// The trailing checksum does not match the bytes before it: the save
    /// was damaged.
    Corrupted {
        /// The checksum stored in the save.
        stored: u64,
        /// The checksum of the bytes read.
        computed: u64,
    },
    /// The container's structure is wrong where its checksum is right (a
    /// save written by something else): an unknown section kind, a name
    /// that is not UTF-8, bytes after the last section.
    Malformed {
        /// What is wrong.
        what: String,
        /// Byte offset of the offending bytes.
        at: u64,
    },
    /// A section names a type this world has not registered for saving
    /// (`World::save_component` / `World::save_service`).
    UnknownType {
        /// What the section holds.
        kind: SectionKind,
        /// The name it was saved under.
        name: String,
    },
    /// A section could not be decoded as the type this world registered
    /// under its name (the type's fields changed since the save, or the
    /// name now belongs to another type), or its contents contradict the
    /// rest of the save (a row count that differs from the entities').
    Shape {
        /// What the section holds.
        kind: SectionKind,
        /// The name it was saved under.
        name: String,
        /// Byte offset of the section's payload.
        at: u64,
        /// What did not fit.
        reason: String,
    },
    /// A part appears twice, or a part every save has is missing.
    Sections {
        /// What is wrong: `the component "hp" appears twice`.
        what: String,
    },
    /// The sections decode but contradict each other (an entity listed
    /// twice, a free slot that is alive...): a forged save.
    Inconsistent {
        /// What contradicts what.
        what: String,
    },
    /// The world's registrations for saving conflict (see
    /// [`SaveError::Registration`]).
    Registration {
        /// The conflicts, each naming both sides.
        conflicts: Vec<String>,
    },
    /// The save was read, and restoring it was refused (only from
    /// [`World::load_from`](crate::World::load_from)).
    Restore(crate::snapshot::RestoreError),
    /// A scripts section holds a script whose type save name this world
    /// has not registered for that store
    /// ([`World::save_step_script`](crate::World::save_step_script)).
    UnknownScript {
        /// The store's save name (the section's).
        store: String,
        /// The script type's save name.
        name: String,
    },
    /// The save holds a [`Local`](crate::Local) of a node no registered
    /// node of this world has the instance key of (register the same
    /// systems before loading).
    NodeMissing {
        /// The node's instance key (its name unless set) in the save.
        node: String,
        /// The local's save name.
        local: String,
    },
    /// The save holds a [`Local`](crate::Local) of a node whose instance
    /// key several registered nodes of this world bear: which one it
    /// belongs to is not guessed.
    NodeAmbiguous {
        /// The node's instance key in the save.
        node: String,
        /// How many registered nodes bear it.
        count: usize,
    },
    /// A saved [`ComponentRef<T>`](crate::ComponentRef)
    /// ([`World::save_component_ref`](crate::World::save_component_ref))
    /// names a target the runtime could not have let it name: a forged
    /// or damaged save.
    Reference {
        /// The entity holding the reference.
        holder: crate::Entity,
        /// The entity it names.
        target: crate::Entity,
        /// `T`'s type name.
        component: &'static str,
        /// What is wrong with the target.
        fault: ReferenceFault,
    },
}

/// What is wrong with a saved reference's target ([`LoadError::Reference`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ReferenceFault {
    /// The target is alive in the save and not frozen (a reference is
    /// only made to a frozen entity, which stays frozen).
    NotFrozen,
    /// The target is alive in the save and its archetype has no `T` in a
    /// table column (none at all, or kept in a sparse set).
    LacksComponent,
    /// The save's id table never handed out the target's id (its slot is
    /// past the table, or its generation was not reached): no entity
    /// ever had it.
    NeverSpawned,
}

impl fmt::Display for ReferenceFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ReferenceFault::NotFrozen => "is alive and not frozen",
            ReferenceFault::LacksComponent => "has no such component in a table column",
            ReferenceFault::NeverSpawned => "was never spawned (its id was never handed out)",
        })
    }
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadError::Io(error) => write!(f, "reading the save failed: {error}"),
            LoadError::NotASave { found } => write!(
                f,
                "not a sluice save: it starts with {found:02x?}, a save with {:02x?} (\"SLUICESV\")",
                MAGIC
            ),
            LoadError::Version { found, supported } => write!(
                f,
                "the save is format version {found}; this build reads version {supported} only"
            ),
            LoadError::Truncated {
                part,
                at,
                needed,
                available,
            } => write!(
                f,
                "the save is truncated: its {part} at byte {at} needs {needed} bytes, {available} are left"
            ),
            LoadError::Corrupted { stored, computed } => write!(
                f,
                "the save is corrupted: its checksum is {stored:#018x}, its contents hash to {computed:#018x}"
            ),
            LoadError::Malformed { what, at } => {
                write!(f, "the save is malformed at byte {at}: {what}")
            }
            LoadError::UnknownType { kind, name } => write!(
                f,
                "the save holds the {kind} `{name}`, which this world has not registered for saving"
            ),
            LoadError::Shape {
                kind,
                name,
                at,
                reason,
            } => write!(
                f,
                "the {kind} `{name}` (payload at byte {at}) does not decode as this world's type: {reason}"
            ),
            LoadError::Sections { what } => write!(f, "the save's sections are wrong: {what}"),
            LoadError::Inconsistent { what } => {
                write!(f, "the save contradicts itself: {what}")
            }
            LoadError::Registration { conflicts } => write!(
                f,
                "the world's registrations for saving conflict: {}",
                conflicts.join("; ")
            ),
            LoadError::Restore(error) => {
                write!(f, "the save was read, its restore refused: {error}")
            }
            LoadError::UnknownScript { store, name } => write!(
                f,
                "the scripts `{store}` hold a script saved as `{name}`, a type this world has not \
                 registered for that store (World::save_step_script)"
            ),
            LoadError::NodeMissing { node, local } => write!(
                f,
                "the save holds the local `{local}` of the node `{node}`, and no registered node \
                 of this world has that instance key"
            ),
            LoadError::NodeAmbiguous { node, count } => write!(
                f,
                "the save holds locals of the node `{node}`, and {count} registered nodes of this \
                 world have that instance key: which one is not guessed"
            ),
            LoadError::Reference {
                holder,
                target,
                component,
                fault,
            } => write!(
                f,
                "{holder}'s saved ComponentRef<{component}> names {target}, which {fault}"
            ),
        }
    }
}

impl std::error::Error for LoadError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            LoadError::Io(error) => Some(error),
            LoadError::Restore(error) => Some(error),
            _ => None,
        }
    }
}

/// One section of a parsed save, borrowed from the input.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Section<'a> {
    pub(crate) kind: SectionKind,
    pub(crate) name: &'a str,
    pub(crate) payload: &'a [u8],
    /// Byte offset of the payload in the save.
    pub(crate) at: u64,
}

impl Section<'_> {
    /// A shape error about this section.
    pub(crate) fn shape(&self, reason: impl fmt::Display) -> LoadError {
        LoadError::Shape {
            kind: self.kind,
            name: self.name.to_owned(),
            at: self.at,
            reason: reason.to_string(),
        }
    }
}

/// A cursor over the input that reports truncation by part and offset.
struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, len: u64, part: impl Fn() -> String) -> Result<&'a [u8], LoadError> {
        let available = self.bytes.len() - self.at;
        match usize::try_from(len) {
            Ok(len) if len <= available => {
                let taken = &self.bytes[self.at..self.at + len];
                self.at += len;
                Ok(taken)
            }
            _ => Err(LoadError::Truncated {
                part: part(),
                at: self.at as u64,
                needed: len,
                available: available as u64,
            }),
        }
    }

    fn array<const N: usize>(&mut self, part: impl Fn() -> String) -> Result<[u8; N], LoadError> {
        let bytes = self.take(N as u64, part)?;
        Ok(bytes.try_into().expect("took N bytes"))
    }
}

/// Parses a whole save: validates the container and returns its sections
/// in file order (their payloads are not decoded here).
pub(crate) fn parse(bytes: &[u8]) -> Result<Vec<Section<'_>>, LoadError> {
    let magic_len = bytes.len().min(MAGIC.len());
    if bytes[..magic_len] != MAGIC[..magic_len] {
        return Err(LoadError::NotASave {
            found: bytes[..magic_len].to_vec(),
        });
    }
    let mut cursor = Cursor { bytes, at: 0 };
    cursor.take(HEADER_LEN as u64, || "header".to_owned())?;
    let version = u32::from_le_bytes(bytes[8..12].try_into().expect("4 bytes"));
    if version != FORMAT_VERSION {
        return Err(LoadError::Version {
            found: version,
            supported: FORMAT_VERSION,
        });
    }
    let count = u32::from_le_bytes(bytes[12..16].try_into().expect("4 bytes"));
    // The sections end where the trailer starts; walk them over the whole
    // input first, so that a truncation is named as one (and where),
    // rather than as a checksum mismatch.
    let walked = walk_sections(bytes, count);
    let sections = match walked {
        Err(truncated @ LoadError::Truncated { .. }) => return Err(truncated),
        other => other,
    };
    let body_len = bytes.len().saturating_sub(TRAILER_LEN).max(HEADER_LEN);
    let mut trailer = Cursor {
        bytes,
        at: body_len,
    };
    let stored = u64::from_le_bytes(trailer.array(|| "checksum".to_owned())?);
    let computed = xxh3_64(&bytes[..body_len]);
    if stored != computed {
        return Err(LoadError::Corrupted { stored, computed });
    }
    let (sections, end) = sections?;
    if end > body_len {
        return Err(LoadError::Malformed {
            what: "the last section runs into the trailing checksum".to_owned(),
            at: body_len as u64,
        });
    }
    if end < body_len {
        return Err(LoadError::Malformed {
            what: format!("{} bytes after the last section", body_len - end),
            at: end as u64,
        });
    }
    Ok(sections)
}

/// Walks `count` sections from the header on; returns them and where the
/// last one ends.
fn walk_sections(bytes: &[u8], count: u32) -> Result<(Vec<Section<'_>>, usize), LoadError> {
    let mut cursor = Cursor {
        bytes,
        at: HEADER_LEN,
    };
    // No reservation from `count`: it is untrusted.
    let mut sections = Vec::new();
    for index in 0..count {
        let start = cursor.at;
        let part = || format!("section {index} (of {count}) header");
        let [kind_byte] = cursor.array::<1>(part)?;
        let name_len = u16::from_le_bytes(cursor.array(part)?);
        let name = cursor.take(u64::from(name_len), part)?;
        let payload_len = u64::from_le_bytes(cursor.array(part)?);
        let name = std::str::from_utf8(name).map_err(|_| LoadError::Malformed {
            what: format!("section {index}'s name is not UTF-8"),
            at: start as u64 + 3,
        })?;
        let kind = SectionKind::from_byte(kind_byte).ok_or_else(|| LoadError::Malformed {
            what: format!("section {index} (`{name}`) has the unknown kind {kind_byte}"),
            at: start as u64,
        })?;
        let at = cursor.at as u64;
        let payload = cursor.take(payload_len, || format!("{kind} `{name}` (section {index})"))?;
        sections.push(Section {
            kind,
            name,
            payload,
            at,
        });
    }
    Ok((sections, cursor.at))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Vec<u8> {
        let mut writer = SaveWriter::start(Vec::new(), 3).unwrap();
        writer
            .section(SectionKind::Entities, "entities", |out| {
                out.extend_from_slice(&[1, 2, 3]);
                Ok(())
            })
            .unwrap();
        writer
            .section(SectionKind::Component, "hp", |out| {
                out.extend_from_slice(&[9; 40]);
                Ok(())
            })
            .unwrap();
        writer
            .section(SectionKind::Service, "score", |_| Ok(()))
            .unwrap();
        writer.finish().unwrap()
    }

    #[test]
    fn round_trip_of_the_container() {
        let bytes = sample();
        let sections = parse(&bytes).unwrap();
        let names: Vec<_> = sections.iter().map(|s| (s.kind, s.name)).collect();
        assert_eq!(
            names,
            [
                (SectionKind::Entities, "entities"),
                (SectionKind::Component, "hp"),
                (SectionKind::Service, "score")
            ]
        );
        assert_eq!(sections[0].payload, [1, 2, 3]);
        assert_eq!(sections[1].payload, [9; 40]);
        assert!(sections[2].payload.is_empty());
        let at = sections[1].at as usize;
        assert_eq!(&bytes[at..at + 40], &[9; 40]);
    }

    #[test]
    fn not_a_save() {
        assert!(matches!(
            parse(b"PNG\x89 and more"),
            Err(LoadError::NotASave { .. })
        ));
        assert!(matches!(parse(b""), Err(LoadError::Truncated { .. })));
        assert!(matches!(parse(b"SLUI"), Err(LoadError::Truncated { .. })));
    }

    #[test]
    fn version_names_both_numbers() {
        let mut bytes = sample();
        bytes[8..12].copy_from_slice(&7u32.to_le_bytes());
        let error = parse(&bytes).unwrap_err();
        assert!(matches!(
            error,
            LoadError::Version {
                found: 7,
                supported: FORMAT_VERSION
            }
        ));
        let text = error.to_string();
        assert!(text.contains('7') && text.contains(&FORMAT_VERSION.to_string()));
    }

    #[test]
    fn every_truncation_is_an_error() {
        let bytes = sample();
        for len in 0..bytes.len() {
            let error = parse(&bytes[..len]).unwrap_err();
            assert!(
                matches!(
                    error,
                    LoadError::Truncated { .. } | LoadError::Corrupted { .. }
                ),
                "{len}: {error}"
            );
        }
        // Cut inside the second section's payload: named as that section.
        let cut = parse(&bytes).unwrap()[1].at as usize + 10;
        let error = parse(&bytes[..cut]).unwrap_err().to_string();
        assert!(error.contains("`hp`"), "{error}");
    }

    #[test]
    fn every_bit_flip_is_an_error() {
        let bytes = sample();
        for byte in 0..bytes.len() {
            for bit in 0..8 {
                let mut flipped = bytes.clone();
                flipped[byte] ^= 1 << bit;
                assert!(parse(&flipped).is_err(), "byte {byte} bit {bit}");
            }
        }
    }

    #[test]
    fn a_section_running_into_the_trailer_is_malformed() {
        // The last payload made 8 bytes longer, the checksum rewritten: the
        // section now ends where the file does, past the checksum's start.
        let mut bytes = sample();
        let sections = parse(&bytes).unwrap();
        let last = sections.last().unwrap();
        let len_at = last.at as usize - 8;
        let len = last.payload.len() as u64 + 8;
        bytes[len_at..len_at + 8].copy_from_slice(&len.to_le_bytes());
        let body = bytes.len() - TRAILER_LEN;
        let digest = xxh3_64(&bytes[..body]);
        bytes[body..].copy_from_slice(&digest.to_le_bytes());
        let error = parse(&bytes).unwrap_err();
        assert!(matches!(error, LoadError::Malformed { .. }), "{error}");
    }

    #[test]
    fn huge_lengths_reserve_nothing() {
        let mut bytes = sample();
        // Section count and the first payload length set huge.
        bytes[12..16].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(parse(&bytes).is_err());
        let mut bytes = sample();
        let length_at = HEADER_LEN + 1 + 2 + "entities".len();
        bytes[length_at..length_at + 8].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(matches!(parse(&bytes), Err(LoadError::Truncated { .. })));
    }

    #[test]
    fn failing_and_panicking_encoders_write_no_section() {
        let mut writer = SaveWriter::start(Vec::new(), 2).unwrap();
        let error = writer
            .section(SectionKind::Component, "hp", |_| {
                Err(postcard::Error::SerdeSerCustom)
            })
            .unwrap_err();
        assert!(matches!(error, SaveError::Encode { ref name, .. } if name == "hp"));
        let error = writer
            .section(SectionKind::Service, "score", |out| {
                out.push(1);
                panic!("no score today")
            })
            .unwrap_err();
        assert!(
            matches!(error, SaveError::Panicked { ref message, .. } if message == "no score today")
        );
        assert_eq!(writer.out.len(), HEADER_LEN);
    }
}
