//! The codecs of saved parts: what `World::save_component::<T>(name)` and
//! `World::save_service::<T>(name)` attach to a type opted into snapshots.
//!
//! A codec knows its type and reads the captured part of that type by
//! downcasting ([`CapturedPart::as_any`]). It encodes a part into a save's
//! section with postcard ([`Sink`]) and hashes the same values, through
//! the same `Serialize` (the same [`Encoding`]), into the checksum's
//! fixed-width encoding ([`PartHasher`]): what is hashed is what is saved,
//! ticks aside, in another form.
//!
//! A component section's payload is the values (a length, then each
//! value), then the added ticks, then the changed ticks, each a postcard
//! sequence. Values are decoded one by one up to the row count the save's
//! entities announce, never up to a length read from the section: a
//! zero-sized component with a forged length of 2^64 would otherwise keep
//! the decoder busy forever.

use std::any::TypeId;
use std::fmt;
use std::marker::PhantomData;

use serde::Serialize;
use serde::de::DeserializeOwned;

use postcard::ser_flavors::Flavor;

use super::checksum::{EncodeError, PartHasher};
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
    /// Hashes value `index` of `part` alone (a row, for the divergence
    /// report).
    fn hash_value(
        &self,
        part: &dyn CapturedPart,
        index: usize,
        hasher: &mut PartHasher,
    ) -> Result<(), EncodeError>;
    /// Hashes what the checksum covers: the values, without ticks (one
    /// monomorphized loop over a component's column).
    fn hash_values(
        &self,
        part: &dyn CapturedPart,
        hasher: &mut PartHasher,
    ) -> Result<(), EncodeError>;
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
fn take<T: DeserializeOwned>(
    bytes: &mut &[u8],
    what: impl FnOnce() -> String,
) -> Result<T, String> {
    // The context is only formatted for an error: decoding a column
    // formats nothing per value.
    let (value, rest) =
        postcard::take_from_bytes::<T>(bytes).map_err(|error| format!("{}: {error}", what()))?;
    *bytes = rest;
    Ok(value)
}

/// How a component's values are written: through their own `Serialize`
/// and `Deserialize` ([`WithSerde`]), or through a form of the runtime's
/// choosing for its own types whose constructors are not public (a
/// `ChildOf` is an `Entity` in a save, and is made again only by a load).
pub(crate) trait Encoding<T>: Send + Sync + 'static {
    /// The form written, borrowed from the value.
    type Saved<'a>: Serialize
    where
        T: 'a;
    /// The form read.
    type Read: DeserializeOwned;
    /// The value's form to write.
    fn saved(value: &T) -> Self::Saved<'_>;
    /// The value from the form read; an error names what is wrong.
    fn restored(read: Self::Read) -> Result<T, String>;
}

/// A type's own `Serialize` and `Deserialize`.
pub(crate) struct WithSerde;

impl<T: Serialize + DeserializeOwned> Encoding<T> for WithSerde {
    type Saved<'a>
        = &'a T
    where
        T: 'a;
    type Read = T;

    fn saved(value: &T) -> &T {
        value
    }

    fn restored(read: T) -> Result<T, String> {
        Ok(read)
    }
}

/// A slice written as a postcard sequence, each value in `E`'s form (for
/// [`WithSerde`], the same bytes as the slice itself).
struct SavedSlice<'a, T, E>(&'a [T], PhantomData<fn() -> E>);

impl<T, E: Encoding<T>> Serialize for SavedSlice<'_, T, E> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let mut seq = serializer.serialize_seq(Some(self.0.len()))?;
        for value in self.0 {
            seq.serialize_element(&E::saved(value))?;
        }
        seq.end()
    }
}

/// Reads a sequence of exactly `expected` values, each decoded in turn,
/// into `into` (which grows with what is decoded, never by a length read
/// from the input).
fn take_sequence<T, R: DeserializeOwned>(
    bytes: &mut &[u8],
    expected: usize,
    what: &str,
    restored: impl Fn(R) -> Result<T, String>,
    into: &mut Vec<T>,
) -> Result<(), String> {
    let len: u64 = take(bytes, || format!("the length of the {what}"))?;
    if len != expected as u64 {
        return Err(format!(
            "{len} {what} where the save's entities have {expected}"
        ));
    }
    for index in 0..expected {
        let read: R = take(bytes, || format!("{what} {index}"))?;
        into.push(restored(read).map_err(|error| format!("{what} {index}: {error}"))?);
    }
    Ok(())
}

/// The codec of a component type, written through `E`.
pub(crate) struct ComponentCodec<T, E = WithSerde> {
    pub(crate) name: &'static str,
    pub(crate) _type: PhantomData<fn() -> (T, E)>,
}

impl<T: Component + Clone, E: Encoding<T>> ComponentCodec<T, E> {
    fn values(part: &dyn CapturedPart) -> &ColumnValues<T> {
        part.as_any()
            .downcast_ref::<ColumnValues<T>>()
            .expect("a codec is only given parts of its own type")
    }
}

impl<T: Component + Clone, E: Encoding<T>> PartCodec for ComponentCodec<T, E> {
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

    fn hash_value(
        &self,
        part: &dyn CapturedPart,
        index: usize,
        hasher: &mut PartHasher,
    ) -> Result<(), EncodeError> {
        hasher.write(&E::saved(&Self::values(part).values[index]))
    }

    fn hash_values(
        &self,
        part: &dyn CapturedPart,
        hasher: &mut PartHasher,
    ) -> Result<(), EncodeError> {
        hasher.write(&SavedSlice::<T, E>(&Self::values(part).values, PhantomData))
    }

    fn encode_section(&self, part: &dyn CapturedPart, out: &mut Vec<u8>) -> postcard::Result<()> {
        let part = Self::values(part);
        encode(
            &(
                SavedSlice::<T, E>(&part.values, PhantomData),
                &part.added[..],
                &part.changed[..],
            ),
            Sink(out),
        )
    }

    fn decode_section(&self, payload: &[u8], rows: usize) -> Result<DecodedPart, String> {
        let mut bytes = payload;
        let mut part = ColumnValues::<T>::default();
        take_sequence(&mut bytes, rows, "values", E::restored, &mut part.values)?;
        take_sequence(&mut bytes, rows, "added ticks", Ok, &mut part.added)?;
        take_sequence(&mut bytes, rows, "changed ticks", Ok, &mut part.changed)?;
        if !bytes.is_empty() {
            return Err(format!("{} bytes left after the values", bytes.len()));
        }
        Ok(DecodedPart::Component(Box::new(part)))
    }
}

/// The codec of a service type.
pub(crate) struct ServiceCodec<T> {
    pub(crate) name: &'static str,
    pub(crate) _type: PhantomData<fn() -> T>,
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

    fn hash_value(
        &self,
        part: &dyn CapturedPart,
        _index: usize,
        hasher: &mut PartHasher,
    ) -> Result<(), EncodeError> {
        hasher.write(&Self::value(part).value)
    }

    fn hash_values(
        &self,
        part: &dyn CapturedPart,
        hasher: &mut PartHasher,
    ) -> Result<(), EncodeError> {
        hasher.write(&Self::value(part).value)
    }

    fn encode_section(&self, part: &dyn CapturedPart, out: &mut Vec<u8>) -> postcard::Result<()> {
        encode(&Self::value(part).value, Sink(out))
    }

    fn decode_section(&self, payload: &[u8], _rows: usize) -> Result<DecodedPart, String> {
        let mut bytes = payload;
        let value: Option<T> = take(&mut bytes, || "the value".to_owned())?;
        if !bytes.is_empty() {
            return Err(format!("{} bytes left after the value", bytes.len()));
        }
        let mut part = ServiceValue::default();
        part.value = value;
        Ok(DecodedPart::Service(Box::new(part)))
    }
}

/// The hash of `part`'s values alone (its name first, so two parts whose
/// values encode alike still differ): one part's share of the checksum.
pub(crate) fn hash_part(
    codec: &dyn PartCodec,
    part: &dyn CapturedPart,
    hasher: &mut PartHasher,
) -> Result<u64, EncodeError> {
    hasher.reset();
    hasher.write(codec.name())?;
    codec.hash_values(part, hasher)?;
    Ok(hasher.digest())
}

/// Where a save's encoding goes: the end of a section's bytes. A postcard
/// [`Flavor`].
pub(crate) struct Sink<'a>(pub(crate) &'a mut Vec<u8>);

impl Flavor for Sink<'_> {
    type Output = ();

    #[inline]
    fn try_extend(&mut self, data: &[u8]) -> postcard::Result<()> {
        self.0.extend_from_slice(data);
        Ok(())
    }

    #[inline]
    fn try_push(&mut self, data: u8) -> postcard::Result<()> {
        self.0.push(data);
        Ok(())
    }

    fn finalize(self) -> postcard::Result<()> {
        Ok(())
    }
}

/// Encodes `value` with postcard onto the end of `sink`.
pub(crate) fn encode<T: Serialize + ?Sized>(value: &T, sink: Sink<'_>) -> postcard::Result<()> {
    postcard::serialize_with_flavor(value, sink)
}
