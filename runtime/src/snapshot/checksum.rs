//! The checksum's encoding: every value of the serde data model at a fixed
//! width in little-endian order, streamed into xxh3-64.
//!
//! A [`PartHasher`] is a `serde::Serializer` that writes each primitive
//! straight into a buffer at its full width (no varint, no per-byte call),
//! then into xxh3-64 (default secret, seed 0) one chunk at a time. The
//! encoding, fixed and the same on every machine:
//!
//! - `bool`, `u8`, `i8`: one byte (`bool` as 0 or 1);
//! - `u16`, `i16`: 2 bytes; `u32`, `i32`, `char` (its scalar value): 4;
//!   `u64`, `i64`: 8; `u128`, `i128`: 16; all little-endian, two's
//!   complement (serde writes `usize` and `isize` as `u64` and `i64`, so
//!   32- and 64-bit machines agree);
//! - `f32`, `f64`: their IEEE-754 bits, little-endian, 4 and 8 bytes
//!   (`-0.0` and `0.0` differ, a NaN's payload is kept);
//! - a string or byte string: its length as a `u64`, then its bytes (UTF-8);
//! - `None`: the byte 0; `Some(v)`: the byte 1, then `v`;
//! - `()`, a unit struct: nothing; a newtype struct: its value;
//! - an enum variant: its index as a `u32`, then its fields (if any);
//! - a sequence or map: its length as a `u64`, then its elements (a map's
//!   keys and values in turn); one whose length serde does not give first
//!   is refused (as postcard refuses it in a save);
//! - a tuple, tuple struct or struct: its fields in order, nothing else.
//!
//! A saved script store (`World::save_scripts`) is one part of the
//! checksum, hashed in this encoding as the tuple `(store name, layout,
//! script count as u64)` followed, per script in serial order, by `(type
//! save name, serial u64, slot u32, name, wait)` and its state: the
//! layout is `(slots u64, free list, next serial u64, clock steps seen
//! u64, (variable ring position u64, fixed ring position u64), finished
//! u64)`, a wait an enum (`Start` 0, `Time` 1, `FixedTime` 2, `NextTick`
//! 3, `Condition` 4) whose deadlines are a `Duration` (`u64` seconds,
//! `u32` nanoseconds); the state is the script's own `Serialize`. A
//! script whose type is not registered is hashed by its Rust type name,
//! without its state (a save of it is refused). Two peers running the
//! same scripts compare them with the rest of the world.
//!
//! Why a serializer of our own: this is bincode 1's format byte for byte
//! but for `char` (bincode writes its UTF-8), and bincode is unmaintained
//! (RUSTSEC-2025-0141); put in its place, it gave the game's checksum the
//! same values at 1.30 ms against this serializer's 0.99 ms (20,000 units,
//! `game/examples/rollback.rs`, three runs each, one machine, 2026-12-06).
//! postcard, the saves' format, writes varints: twice the instructions.

use std::fmt;

use serde::Serialize;
use serde::ser::{self, Serializer};
use xxhash_rust::xxh3::Xxh3;

/// Bytes gathered before each update of the hasher.
const CHUNK: usize = 1024;

/// A saved type's `Serialize` failed while it was being hashed.
#[derive(Debug)]
pub(crate) struct EncodeError(String);

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for EncodeError {}

impl ser::Error for EncodeError {
    fn custom<T: fmt::Display>(message: T) -> Self {
        Self(message.to_string())
    }
}

/// xxh3-64 of the fixed-width encoding of what is serialized into it,
/// gathered through a fixed buffer: each streaming update of xxh3 costs
/// far more than a few bytes' copy, and the buffer holds no copy of a
/// large column.
pub(crate) struct PartHasher {
    state: Xxh3,
    chunk: [u8; CHUNK],
    len: usize,
}

impl PartHasher {
    /// A hasher of nothing yet (seed 0, the default secret).
    pub(crate) fn new() -> Self {
        Self {
            state: Xxh3::new(),
            chunk: [0; CHUNK],
            len: 0,
        }
    }

    /// Forgets what was written: a hasher of nothing again.
    pub(crate) fn reset(&mut self) {
        self.state.reset();
        self.len = 0;
    }

    /// Writes `bytes`, a primitive's fixed-width form.
    #[inline(always)]
    fn put<const N: usize>(&mut self, bytes: [u8; N]) {
        // One bounds check is both the room check and the slice's own.
        if let Some(room) = self.chunk.get_mut(self.len..self.len + N) {
            room.copy_from_slice(&bytes);
            self.len += N;
        } else {
            self.put_slice(&bytes);
        }
    }

    /// Writes a length, as a `u64`.
    #[inline(always)]
    fn put_len(&mut self, len: usize) {
        self.put((len as u64).to_le_bytes());
    }

    #[inline(never)]
    fn put_slice(&mut self, data: &[u8]) {
        if self.len + data.len() > CHUNK {
            self.flush();
            if data.len() >= CHUNK {
                self.state.update(data);
                return;
            }
        }
        self.chunk[self.len..self.len + data.len()].copy_from_slice(data);
        self.len += data.len();
    }

    fn flush(&mut self) {
        self.state.update(&self.chunk[..self.len]);
        self.len = 0;
    }

    /// The hash of everything written (more may be written after).
    pub(crate) fn digest(&mut self) -> u64 {
        self.flush();
        self.state.digest()
    }

    /// Writes `value`'s encoding.
    pub(crate) fn write<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), EncodeError> {
        value.serialize(self)
    }
}

/// The hash of `value`'s encoding alone.
#[cfg(test)]
pub(crate) fn hash_of<T: Serialize + ?Sized>(value: &T) -> Result<u64, EncodeError> {
    let mut hasher = PartHasher::new();
    hasher.write(value)?;
    Ok(hasher.digest())
}

impl Serializer for &mut PartHasher {
    type Ok = ();
    type Error = EncodeError;
    type SerializeSeq = Self;
    type SerializeTuple = Self;
    type SerializeTupleStruct = Self;
    type SerializeTupleVariant = Self;
    type SerializeMap = Self;
    type SerializeStruct = Self;
    type SerializeStructVariant = Self;

    #[inline(always)]
    fn serialize_bool(self, v: bool) -> Result<(), EncodeError> {
        self.put([u8::from(v)]);
        Ok(())
    }
    #[inline(always)]
    fn serialize_i8(self, v: i8) -> Result<(), EncodeError> {
        self.put(v.to_le_bytes());
        Ok(())
    }
    #[inline(always)]
    fn serialize_i16(self, v: i16) -> Result<(), EncodeError> {
        self.put(v.to_le_bytes());
        Ok(())
    }
    #[inline(always)]
    fn serialize_i32(self, v: i32) -> Result<(), EncodeError> {
        self.put(v.to_le_bytes());
        Ok(())
    }
    #[inline(always)]
    fn serialize_i64(self, v: i64) -> Result<(), EncodeError> {
        self.put(v.to_le_bytes());
        Ok(())
    }
    #[inline(always)]
    fn serialize_i128(self, v: i128) -> Result<(), EncodeError> {
        self.put(v.to_le_bytes());
        Ok(())
    }
    #[inline(always)]
    fn serialize_u8(self, v: u8) -> Result<(), EncodeError> {
        self.put([v]);
        Ok(())
    }
    #[inline(always)]
    fn serialize_u16(self, v: u16) -> Result<(), EncodeError> {
        self.put(v.to_le_bytes());
        Ok(())
    }
    #[inline(always)]
    fn serialize_u32(self, v: u32) -> Result<(), EncodeError> {
        self.put(v.to_le_bytes());
        Ok(())
    }
    #[inline(always)]
    fn serialize_u64(self, v: u64) -> Result<(), EncodeError> {
        self.put(v.to_le_bytes());
        Ok(())
    }
    #[inline(always)]
    fn serialize_u128(self, v: u128) -> Result<(), EncodeError> {
        self.put(v.to_le_bytes());
        Ok(())
    }
    #[inline(always)]
    fn serialize_f32(self, v: f32) -> Result<(), EncodeError> {
        self.put(v.to_bits().to_le_bytes());
        Ok(())
    }
    #[inline(always)]
    fn serialize_f64(self, v: f64) -> Result<(), EncodeError> {
        self.put(v.to_bits().to_le_bytes());
        Ok(())
    }
    #[inline(always)]
    fn serialize_char(self, v: char) -> Result<(), EncodeError> {
        self.put(u32::from(v).to_le_bytes());
        Ok(())
    }
    fn serialize_str(self, v: &str) -> Result<(), EncodeError> {
        self.serialize_bytes(v.as_bytes())
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<(), EncodeError> {
        self.put_len(v.len());
        self.put_slice(v);
        Ok(())
    }
    #[inline(always)]
    fn serialize_none(self) -> Result<(), EncodeError> {
        self.put([0]);
        Ok(())
    }
    #[inline(always)]
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), EncodeError> {
        self.put([1]);
        value.serialize(self)
    }
    #[inline(always)]
    fn serialize_unit(self) -> Result<(), EncodeError> {
        Ok(())
    }
    #[inline(always)]
    fn serialize_unit_struct(self, _name: &'static str) -> Result<(), EncodeError> {
        Ok(())
    }
    #[inline(always)]
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        variant_index: u32,
        _variant: &'static str,
    ) -> Result<(), EncodeError> {
        self.put(variant_index.to_le_bytes());
        Ok(())
    }
    #[inline(always)]
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<(), EncodeError> {
        value.serialize(self)
    }
    #[inline(always)]
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        variant_index: u32,
        _variant: &'static str,
        value: &T,
    ) -> Result<(), EncodeError> {
        self.put(variant_index.to_le_bytes());
        value.serialize(self)
    }
    #[inline(always)]
    fn serialize_seq(self, len: Option<usize>) -> Result<Self, EncodeError> {
        let len = len.ok_or_else(|| {
            EncodeError("a sequence whose length serde does not give first".to_owned())
        })?;
        self.put_len(len);
        Ok(self)
    }
    #[inline(always)]
    fn serialize_tuple(self, _len: usize) -> Result<Self, EncodeError> {
        Ok(self)
    }
    #[inline(always)]
    fn serialize_tuple_struct(self, _name: &'static str, _len: usize) -> Result<Self, EncodeError> {
        Ok(self)
    }
    #[inline(always)]
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        variant_index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self, EncodeError> {
        self.put(variant_index.to_le_bytes());
        Ok(self)
    }
    #[inline(always)]
    fn serialize_map(self, len: Option<usize>) -> Result<Self, EncodeError> {
        let len = len.ok_or_else(|| {
            EncodeError("a map whose length serde does not give first".to_owned())
        })?;
        self.put_len(len);
        Ok(self)
    }
    #[inline(always)]
    fn serialize_struct(self, _name: &'static str, _len: usize) -> Result<Self, EncodeError> {
        Ok(self)
    }
    #[inline(always)]
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        variant_index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self, EncodeError> {
        self.put(variant_index.to_le_bytes());
        Ok(self)
    }
    fn is_human_readable(&self) -> bool {
        false
    }
}

/// Elements, fields and entries are written in turn, with nothing between.
macro_rules! in_turn {
    ($($trait:ident :: $method:ident $(($key:ident))?),* $(,)?) => {$(
        impl ser::$trait for &mut PartHasher {
            type Ok = ();
            type Error = EncodeError;
            #[inline(always)]
            fn $method<T: Serialize + ?Sized>(
                &mut self,
                $($key: &'static str,)?
                value: &T,
            ) -> Result<(), EncodeError> {
                $(let _ = $key;)?
                value.serialize(&mut **self)
            }
            #[inline]
            fn end(self) -> Result<(), EncodeError> {
                Ok(())
            }
        }
    )*};
}

in_turn!(
    SerializeSeq::serialize_element,
    SerializeTuple::serialize_element,
    SerializeTupleStruct::serialize_field,
    SerializeTupleVariant::serialize_field,
    SerializeStruct::serialize_field(key),
    SerializeStructVariant::serialize_field(key),
);

impl ser::SerializeMap for &mut PartHasher {
    type Ok = ();
    type Error = EncodeError;
    #[inline(always)]
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), EncodeError> {
        key.serialize(&mut **self)
    }
    #[inline(always)]
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), EncodeError> {
        value.serialize(&mut **self)
    }
    #[inline]
    fn end(self) -> Result<(), EncodeError> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use xxhash_rust::xxh3::xxh3_64;

    #[derive(Serialize)]
    struct Unit {
        id: u64,
        name: String,
        position: (f32, f32),
        tags: Vec<u16>,
        target: Option<u32>,
        kind: Kind,
    }

    #[derive(Serialize)]
    enum Kind {
        Archer,
        Knight(i8),
        Captain { rank: u16 },
    }

    fn unit() -> Unit {
        Unit {
            id: 7,
            name: "archer".into(),
            position: (1.5, -2.25),
            tags: vec![1, 300, 65535],
            target: Some(3),
            kind: Kind::Knight(-2),
        }
    }

    /// `unit()`'s encoding, written out by hand from the module's rules.
    fn unit_bytes() -> Vec<u8> {
        let mut bytes = Vec::new();
        bytes.extend(7u64.to_le_bytes());
        bytes.extend(6u64.to_le_bytes());
        bytes.extend(b"archer");
        bytes.extend(1.5f32.to_bits().to_le_bytes());
        bytes.extend((-2.25f32).to_bits().to_le_bytes());
        bytes.extend(3u64.to_le_bytes());
        for tag in [1u16, 300, 65535] {
            bytes.extend(tag.to_le_bytes());
        }
        bytes.push(1);
        bytes.extend(3u32.to_le_bytes());
        bytes.extend(1u32.to_le_bytes());
        bytes.push(0xFE);
        bytes
    }

    #[test]
    fn the_encoding_is_the_documented_one() {
        assert_eq!(hash_of(&unit()).unwrap(), xxh3_64(&unit_bytes()));
        let mut captain = 2u32.to_le_bytes().to_vec();
        captain.extend(9u16.to_le_bytes());
        assert_eq!(
            hash_of(&Kind::Captain { rank: 9 }).unwrap(),
            xxh3_64(&captain)
        );
        assert_eq!(
            hash_of(&Kind::Archer).unwrap(),
            xxh3_64(&0u32.to_le_bytes())
        );
        assert_eq!(hash_of(&None::<u8>).unwrap(), xxh3_64(&[0]));
        assert_eq!(hash_of(&(true, 'é')).unwrap(), xxh3_64(&[1, 0xE9, 0, 0, 0]));
        assert_eq!(hash_of(&()).unwrap(), xxh3_64(b""));
        let mut map = std::collections::BTreeMap::new();
        map.insert(1u8, -1i64);
        let mut bytes = 1u64.to_le_bytes().to_vec();
        bytes.push(1);
        bytes.extend((-1i64).to_le_bytes());
        assert_eq!(hash_of(&map).unwrap(), xxh3_64(&bytes));
        assert_eq!(
            hash_of(&u128::MAX).unwrap(),
            xxh3_64(&u128::MAX.to_le_bytes())
        );
    }

    #[test]
    fn one_bit_changes_the_hash() {
        let base = hash_of(&unit()).unwrap();
        let mut other = unit();
        other.id ^= 1 << 40;
        assert_ne!(base, hash_of(&other).unwrap());
        let mut other = unit();
        other.position.0 = f32::from_bits(other.position.0.to_bits() ^ 1);
        assert_ne!(base, hash_of(&other).unwrap());
        let mut other = unit();
        other.target = None;
        assert_ne!(base, hash_of(&other).unwrap());
        let mut other = unit();
        other.kind = Kind::Archer;
        assert_ne!(base, hash_of(&other).unwrap());
    }

    #[test]
    fn float_bits_are_exact() {
        assert_ne!(hash_of(&0.0f64).unwrap(), hash_of(&-0.0f64).unwrap());
        let quiet = f64::from_bits(0x7ff8_0000_0000_0001);
        let other_payload = f64::from_bits(0x7ff8_0000_0000_0002);
        assert!(quiet.is_nan() && other_payload.is_nan());
        assert_ne!(hash_of(&quiet).unwrap(), hash_of(&other_payload).unwrap());
        assert_eq!(
            hash_of(&quiet).unwrap(),
            xxh3_64(&0x7ff8_0000_0000_0001u64.to_le_bytes())
        );
    }

    #[test]
    fn consecutive_writes_hash_as_their_tuple() {
        let mut hasher = PartHasher::new();
        hasher.write(&unit()).unwrap();
        hasher.write(&42u32).unwrap();
        hasher.write("end").unwrap();
        assert_eq!(hasher.digest(), hash_of(&(unit(), 42u32, "end")).unwrap());
        // A reset hasher starts again from nothing.
        hasher.reset();
        hasher.write(&42u32).unwrap();
        assert_eq!(hasher.digest(), hash_of(&42u32).unwrap());
    }

    #[test]
    fn the_buffer_does_not_change_the_hash() {
        // Values across the chunk's edge, and a byte string longer than one.
        let long: Vec<u8> = (0..3 * CHUNK as u32).map(|i| i as u8).collect();
        let many = vec![7u64; 300];
        let value = (&many, serde_bytes_like(&long), "tail", 5u8);
        let mut bytes = 300u64.to_le_bytes().to_vec();
        for value in &many {
            bytes.extend(value.to_le_bytes());
        }
        bytes.extend((long.len() as u64).to_le_bytes());
        bytes.extend(&long);
        bytes.extend(4u64.to_le_bytes());
        bytes.extend(b"tail");
        bytes.push(5);
        assert_eq!(hash_of(&value).unwrap(), xxh3_64(&bytes));
    }

    /// A byte string (`serialize_bytes`), as `serde_bytes` writes one.
    fn serde_bytes_like(bytes: &[u8]) -> impl Serialize + '_ {
        struct Bytes<'a>(&'a [u8]);
        impl Serialize for Bytes<'_> {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_bytes(self.0)
            }
        }
        Bytes(bytes)
    }

    #[test]
    fn a_sequence_of_unknown_length_is_refused() {
        struct Unknown;
        impl Serialize for Unknown {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                use serde::ser::SerializeSeq;
                let mut seq = serializer.serialize_seq(None)?;
                seq.serialize_element(&1u8)?;
                seq.end()
            }
        }
        let error = hash_of(&Unknown).unwrap_err();
        assert!(error.to_string().contains("length"), "{error}");
    }

    /// xxh3-64 of the pinned value's 29 bytes.
    const PINNED: u64 = 0x62D6_3E4E_F84A_F1D0;

    #[test]
    fn pinned_value_is_the_same_on_every_machine() {
        // Fixed input, fixed output: a change of encoding or hash shows here.
        // xxh3-64 of the empty input, seed 0, as the specification gives it.
        assert_eq!(xxh3_64(b""), 0x2D06_8005_38D3_94C2);
        let value = (7u8, vec![2u64, 300u64], -1.0f32);
        let bytes = [
            7, // u8
            2, 0, 0, 0, 0, 0, 0, 0, // the length, a u64
            2, 0, 0, 0, 0, 0, 0, 0, // 2u64
            0x2C, 0x01, 0, 0, 0, 0, 0, 0, // 300u64
            0x00, 0x00, 0x80, 0xBF, // -1.0f32's bits
        ];
        assert_eq!(hash_of(&value).unwrap(), xxh3_64(&bytes));
        assert_eq!(
            hash_of(&value).unwrap(),
            PINNED,
            "{:#018x}",
            hash_of(&value).unwrap()
        );
        // `usize` is written as a `u64` on every machine.
        assert_eq!(hash_of(&usize::MAX).unwrap(), hash_of(&u64::MAX).unwrap());
        assert_eq!(
            hash_of(&[3usize][..]).unwrap(),
            hash_of(&[3u64][..]).unwrap()
        );
    }
}
