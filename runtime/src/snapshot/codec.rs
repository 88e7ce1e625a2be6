//! The codecs of saved parts: what `World::save_component::<T>(name)` and
//! `World::save_service::<T>(name)` attach to a type opted into snapshots.
//!
//! A codec knows its type and reads the captured part of that type by
//! downcasting ([`CapturedPart::as_any`]). The same code encodes a part
//! into a save's section and streams it into the checksum's hasher
//! ([`Sink`]): what is hashed is what is saved, ticks aside.
//!
//! A component section's payload is the values (a length, then each
//! value), then the added ticks, then the changed ticks, each a postcard
//! sequence. Values are decoded one by one up to the row count the save's
//! entities announce, never up to a length read from the section: a
//! zero-sized component with a forged length of 2^64 would otherwise keep
//! the decoder busy forever.

use std::any::TypeId;
use std::fmt;

use serde::Serialize;
use serde::de::DeserializeOwned;
use xxhash_rust::xxh3::Xxh3;

use super::checksum::{Sink, encode};
use super::file::SectionKind;
use super::part::{CapturedPart, ColumnValues, ComponentPart, ServicePart, ServiceValue};
use crate::entity::Component;

/// A decoded section, ready to go into a snapshot.
pub(crate) enum DecodedPart {
    /// A component's values and ticks.
    Component(Box<dyn ComponentPart>),
    /// A service's value.
    Service(Box<dyn ServicePart>),
}

/// Encodes, hashes and decodes the captured parts of one type.
pub(crate) trait PartCodec: Send + Sync + 'static {
    /// The name the type is saved under.
    fn name(&self) -> &'static str;
    /// A component or a service.
    fn kind(&self) -> SectionKind;
    /// The type it encodes.
    fn value_type(&self) -> TypeId;
    /// `std::any::type_name` of that type.
    fn type_name(&self) -> &'static str;
    /// Encodes value `index` of `part` alone (a row, for the divergence
    /// report).
    fn encode_value(
        &self,
        part: &dyn CapturedPart,
        index: usize,
        sink: Sink<'_>,
    ) -> postcard::Result<()>;
    /// Encodes what the checksum covers: the values, without ticks.
    fn encode_values(&self, part: &dyn CapturedPart, sink: Sink<'_>) -> postcard::Result<()>;
    /// Encodes the section's payload: the values and, for a component,
    /// the ticks.
    fn encode_section(&self, part: &dyn CapturedPart, out: &mut Vec<u8>) -> postcard::Result<()>;
    /// Decodes a section's payload holding `rows` values (a component's:
    /// the rows its archetypes have in the save; ignored for a service).
    fn decode_section(&self, payload: &[u8], rows: usize) -> Result<DecodedPart, String>;
}

impl fmt::Debug for dyn PartCodec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PartCodec")
            .field("name", &self.name())
            .field("kind", &self.kind())
            .field("type", &self.type_name())
            .finish()
    }
}

/// Reads one postcard value from the front of `bytes`.
fn take<T: DeserializeOwned>(bytes: &mut &[u8], what: &str) -> Result<T, String> {
    let (value, rest) =
        postcard::take_from_bytes::<T>(bytes).map_err(|error| format!("{what}: {error}"))?;
    *bytes = rest;
    Ok(value)
}

/// Reads a sequence of exactly `expected` values, each decoded in turn.
fn take_sequence<T: DeserializeOwned>(
    bytes: &mut &[u8],
    expected: usize,
    what: &str,
    into: &mut Vec<T>,
) -> Result<(), String> {
    let len: u64 = take(bytes, &format!("the length of the {what}"))?;
    if len != expected as u64 {
        return Err(format!(
            "{len} {what} where the save's entities have {expected}"
        ));
    }
    // `expected` is bounded by the entity ids read from the input (each
    // takes at least a byte), so this reservation is too.
    into.reserve(expected);
    for index in 0..expected {
        into.push(take(bytes, &format!("{what} {index}"))?);
    }
    Ok(())
}

/// The codec of a component type.
pub(crate) struct ComponentCodec<T> {
    pub(crate) name: &'static str,
    pub(crate) _type: std::marker::PhantomData<fn() -> T>,
}

impl<T: Component + Clone + Serialize + DeserializeOwned> ComponentCodec<T> {
    fn values(part: &dyn CapturedPart) -> &ColumnValues<T> {
        part.as_any()
            .downcast_ref::<ColumnValues<T>>()
            .expect("a codec is only given parts of its own type")
    }
}

impl<T: Component + Clone + Serialize + DeserializeOwned> PartCodec for ComponentCodec<T> {
    fn name(&self) -> &'static str {
        self.name
    }

    fn kind(&self) -> SectionKind {
        SectionKind::Component
    }

    fn value_type(&self) -> TypeId {
        TypeId::of::<T>()
    }

    fn type_name(&self) -> &'static str {
        std::any::type_name::<T>()
    }

    fn encode_value(
        &self,
        part: &dyn CapturedPart,
        index: usize,
        sink: Sink<'_>,
    ) -> postcard::Result<()> {
        encode(&Self::values(part).values[index], sink)
    }

    fn encode_values(&self, part: &dyn CapturedPart, sink: Sink<'_>) -> postcard::Result<()> {
        encode(&Self::values(part).values[..], sink)
    }

    fn encode_section(&self, part: &dyn CapturedPart, out: &mut Vec<u8>) -> postcard::Result<()> {
        let part = Self::values(part);
        encode(
            &(&part.values[..], &part.added[..], &part.changed[..]),
            Sink::Bytes(out),
        )
    }

    fn decode_section(&self, payload: &[u8], rows: usize) -> Result<DecodedPart, String> {
        let mut bytes = payload;
        let mut part = ColumnValues::<T>::default();
        take_sequence(&mut bytes, rows, "values", &mut part.values)?;
        take_sequence(&mut bytes, rows, "added ticks", &mut part.added)?;
        take_sequence(&mut bytes, rows, "changed ticks", &mut part.changed)?;
        if !bytes.is_empty() {
            return Err(format!("{} bytes left after the values", bytes.len()));
        }
        Ok(DecodedPart::Component(Box::new(part)))
    }
}

/// The codec of a service type.
pub(crate) struct ServiceCodec<T> {
    pub(crate) name: &'static str,
    pub(crate) _type: std::marker::PhantomData<fn() -> T>,
}

impl<T: Clone + Send + Sync + Serialize + DeserializeOwned + 'static> ServiceCodec<T> {
    fn value(part: &dyn CapturedPart) -> &ServiceValue<T> {
        part.as_any()
            .downcast_ref::<ServiceValue<T>>()
            .expect("a codec is only given parts of its own type")
    }
}

impl<T: Clone + Send + Sync + Serialize + DeserializeOwned + 'static> PartCodec
    for ServiceCodec<T>
{
    fn name(&self) -> &'static str {
        self.name
    }

    fn kind(&self) -> SectionKind {
        SectionKind::Service
    }

    fn value_type(&self) -> TypeId {
        TypeId::of::<T>()
    }

    fn type_name(&self) -> &'static str {
        std::any::type_name::<T>()
    }

    fn encode_value(
        &self,
        part: &dyn CapturedPart,
        _index: usize,
        sink: Sink<'_>,
    ) -> postcard::Result<()> {
        encode(&Self::value(part).value, sink)
    }

    fn encode_values(&self, part: &dyn CapturedPart, sink: Sink<'_>) -> postcard::Result<()> {
        encode(&Self::value(part).value, sink)
    }

    fn encode_section(&self, part: &dyn CapturedPart, out: &mut Vec<u8>) -> postcard::Result<()> {
        encode(&Self::value(part).value, Sink::Bytes(out))
    }

    fn decode_section(&self, payload: &[u8], _rows: usize) -> Result<DecodedPart, String> {
        let mut bytes = payload;
        let value: Option<T> = take(&mut bytes, "the value")?;
        if !bytes.is_empty() {
            return Err(format!("{} bytes left after the value", bytes.len()));
        }
        Ok(DecodedPart::Service(Box::new(ServiceValue { value })))
    }
}

/// Hashes `part`'s values into `hasher` (its name first, so two parts
/// whose values encode alike still differ).
pub(crate) fn hash_part(
    codec: &dyn PartCodec,
    part: &dyn CapturedPart,
    hasher: &mut Xxh3,
) -> postcard::Result<()> {
    let mut sink = Sink::Hash(hasher);
    encode(codec.name(), sink.reborrow())?;
    codec.encode_values(part, sink)
}
