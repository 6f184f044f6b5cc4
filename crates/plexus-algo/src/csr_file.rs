//! A [`Csr`] saved to one file and opened by memory-mapping it.
//!
//! Layout (all numbers little-endian):
//!
//! ```text
//! "PLXCSR02"                         8 bytes of magic
//! header_len: u64                    bytes of the header that follows
//! header:                            version, nodes, out edges, in edges,
//!                                    key bytes, weights (u64 each),
//!                                    has_keys (u8), has_weights (u8),
//!                                    graph name (u32 length + UTF-8),
//!                                    type ids (u32) and names,
//!                                    [weight key], padded to 8 bytes
//! arrays, each padded to 8 bytes:    ids, out.off, out.target, out.edge, out.rel,
//!                                    in.off, in.target, in.edge, in.rel,
//!                                    [keys.off, keys.bytes],
//!                                    [weight edge ids ascending, weights as f64 bits]
//! ```
//!
//! A file of the first version (`PLXCSR01`, before weights were saved) is
//! refused with an error that says to save it again.
//!
//! Opening trusts nothing in the file: every length is checked against the
//! file's size with checked arithmetic before anything is sliced, nothing is
//! allocated by a count read from the file, and the arrays are validated
//! (ascending ids, non-decreasing offsets that end at the edge count,
//! targets within the node count) so a damaged file is an error, never a
//! panic or a wrong answer.

use crate::buf::{Buf, Plain};
use crate::csr::{id_table, Csr, Keys, Side};
use crate::error::{AlgoError, Result};
use memmap2::Mmap;
use plexus_storage::TypeId;
use std::collections::HashMap;
use std::io::Write;
use std::path::Path;
use std::sync::Arc;

const MAGIC: &[u8; 8] = b"PLXCSR02";
/// The first version: no weights.
const MAGIC_V1: &[u8; 8] = b"PLXCSR01";

fn bad(path: &Path, why: impl std::fmt::Display) -> AlgoError {
    AlgoError::BadInput(format!(
        "{} is not a readable Plexus snapshot: {why}",
        path.display()
    ))
}

fn io(path: &Path) -> impl Fn(std::io::Error) -> AlgoError + '_ {
    move |e| AlgoError::BadInput(format!("{}: {e}", path.display()))
}

fn pad8(n: usize) -> usize {
    (8 - n % 8) % 8
}

fn endian_check() -> Result<()> {
    if cfg!(target_endian = "big") {
        return Err(AlgoError::BadInput(
            "snapshot files are little-endian; this machine is big-endian".into(),
        ));
    }
    Ok(())
}

impl Csr {
    /// Writes the snapshot to `path` (replacing it): written beside it, synced
    /// and renamed into place, so a crash leaves the old file or the new one.
    pub fn save(&self, path: &Path) -> Result<()> {
        endian_check()?;
        let weights = self.weight_arrays();
        let tmp = path.with_extension("partial");
        let mut f = std::io::BufWriter::new(std::fs::File::create(&tmp).map_err(io(&tmp))?);
        let header = self.header();
        let mut w = |b: &[u8]| f.write_all(b).map_err(io(&tmp));
        w(MAGIC)?;
        w(&(header.len() as u64).to_le_bytes())?;
        w(&header)?;
        let mut arrays: Vec<&[u8]> = vec![self.ids.bytes()];
        for s in [&self.out, &self.inc] {
            arrays.extend([
                s.off.bytes(),
                s.target.bytes(),
                s.edge.bytes(),
                s.rel.bytes(),
            ]);
        }
        if let Some(k) = &self.keys {
            arrays.extend([k.off.bytes(), k.bytes.bytes()]);
        }
        if let Some((edges, bits)) = &weights {
            arrays.extend([edges.bytes(), bits.bytes()]);
        }
        for a in arrays {
            w(a)?;
            w(&[0u8; 8][..pad8(a.len())])?;
        }
        let file = f
            .into_inner()
            .map_err(|e| AlgoError::BadInput(format!("{}: {e}", tmp.display())))?;
        file.sync_all().map_err(io(&tmp))?;
        std::fs::rename(&tmp, path).map_err(io(path))
    }

    /// The weights as two arrays in edge id order: ids, and f64 bits.
    fn weight_arrays(&self) -> Option<(Buf<u64>, Buf<u64>)> {
        let (_, w) = self.weights.as_ref()?;
        let mut pairs: Vec<(u64, u64)> = w.iter().map(|(e, x)| (*e, x.to_bits())).collect();
        pairs.sort_unstable();
        let (edges, bits): (Vec<u64>, Vec<u64>) = pairs.into_iter().unzip();
        Some((Buf::from(edges), Buf::from(bits)))
    }

    fn header(&self) -> Vec<u8> {
        let mut h = Vec::new();
        let key_bytes = self.keys.as_ref().map_or(0, |k| k.bytes.len());
        let weights = self.weights.as_ref().map_or(0, |(_, w)| w.len());
        for n in [
            self.version,
            self.ids.len() as u64,
            self.out.edge.len() as u64,
            self.inc.edge.len() as u64,
            key_bytes as u64,
            weights as u64,
        ] {
            h.extend_from_slice(&n.to_le_bytes());
        }
        h.push(u8::from(self.keys.is_some()));
        h.push(u8::from(self.weights.is_some()));
        let mut text = |s: &str| {
            h.extend_from_slice(&(s.len() as u32).to_le_bytes());
            h.extend_from_slice(s.as_bytes());
        };
        text(&self.graph);
        let mut types: Vec<(&String, &TypeId)> = self.types.iter().collect();
        types.sort_by_key(|(_, t)| t.0);
        h.extend_from_slice(&(types.len() as u32).to_le_bytes());
        for (name, t) in types {
            h.extend_from_slice(&t.0.to_le_bytes());
            h.extend_from_slice(&(name.len() as u32).to_le_bytes());
            h.extend_from_slice(name.as_bytes());
        }
        if let Some((key, _)) = &self.weights {
            h.extend_from_slice(&(key.len() as u32).to_le_bytes());
            h.extend_from_slice(key.as_bytes());
        }
        h.extend(std::iter::repeat_n(0u8, pad8(h.len() + 16)));
        h
    }

    /// Opens a snapshot [`Csr::save`] wrote, by memory-mapping the file:
    /// nothing is read until used. The file must not change while open.
    pub fn open(path: &Path) -> Result<Csr> {
        endian_check()?;
        let file = std::fs::File::open(path).map_err(io(path))?;
        // SAFETY: the map is read-only; a file changed by another process
        // while mapped is outside what Plexus promises (documented above),
        // and everything read from it is bounds-checked again.
        let map = Arc::new(unsafe { Mmap::map(&file) }.map_err(io(path))?);
        let mut r = Reader {
            map: &map,
            at: 0,
            path,
        };
        match r.take(8)? {
            m if m == MAGIC => {}
            m if m == MAGIC_V1 => {
                return Err(bad(
                    path,
                    "it was saved by an earlier version of Plexus; build and save it again",
                ))
            }
            _ => return Err(bad(path, "wrong magic (not a snapshot)")),
        }
        let header_len = r.u64()? as usize;
        let body =
            r.at.checked_add(header_len)
                .ok_or_else(|| bad(path, "header too long"))?;
        let version = r.u64()?;
        let [nodes, out_edges, in_edges, key_bytes] = [r.u64()?, r.u64()?, r.u64()?, r.u64()?]
            .map(|n| usize::try_from(n).unwrap_or(usize::MAX));
        let weight_count = usize::try_from(r.u64()?).unwrap_or(usize::MAX);
        let has_keys = r.take(1)?[0] == 1;
        let has_weights = r.take(1)?[0] == 1;
        let graph = r.text()?;
        let mut types = HashMap::new();
        for _ in 0..r.u32()? {
            let id = r.u32()?;
            types.insert(r.text()?, TypeId(id));
        }
        let weight_key = match has_weights {
            true => Some(r.text()?),
            false => None,
        };
        if r.at > body {
            return Err(bad(path, "the header is longer than it says"));
        }
        r.at = body;
        let ids: Buf<u64> = r.array(nodes)?;
        let out = r.side(nodes, out_edges)?;
        let inc = r.side(nodes, in_edges)?;
        let keys = if has_keys {
            let k = Keys {
                off: r.array(nodes + 1)?,
                bytes: r.array(key_bytes)?,
            };
            check_offsets(path, &k.off, key_bytes, "key")?;
            Some(k)
        } else {
            None
        };
        let weights = match weight_key {
            Some(key) => Some((key, r.weights(weight_count)?)),
            None => None,
        };
        if r.at != map.len() {
            return Err(bad(path, "the file is longer than its arrays"));
        }
        if ids.windows(2).any(|w| w[0] >= w[1]) {
            return Err(bad(path, "node ids are not ascending"));
        }
        for (side, edges) in [(&out, out_edges), (&inc, in_edges)] {
            check_offsets(path, &side.off, edges, "edge")?;
            if side.target.iter().any(|t| *t as usize >= nodes) {
                return Err(bad(path, "an edge points past the last node"));
            }
        }
        Ok(Csr {
            graph,
            version,
            table: id_table(&ids),
            ids,
            out,
            inc,
            types,
            weights,
            keys,
        })
    }
}

fn check_offsets(path: &Path, off: &[u64], end: usize, what: &str) -> Result<()> {
    let ok = off.first() == Some(&0)
        && off.last() == Some(&(end as u64))
        && off.windows(2).all(|w| w[0] <= w[1]);
    if ok {
        Ok(())
    } else {
        Err(bad(path, format!("{what} offsets are not in order")))
    }
}

/// A bounds-checked cursor over the mapped file.
struct Reader<'a> {
    map: &'a Arc<Mmap>,
    at: usize,
    path: &'a Path,
}

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8]> {
        let end = self
            .at
            .checked_add(n)
            .filter(|e| *e <= self.map.len())
            .ok_or_else(|| bad(self.path, "the file ends early"))?;
        let s = &self.map[self.at..end];
        self.at = end;
        Ok(s)
    }

    fn u64(&mut self) -> Result<u64> {
        let b = self.take(8)?;
        Ok(u64::from_le_bytes(
            b.try_into().map_err(|_| bad(self.path, "short"))?,
        ))
    }

    fn u32(&mut self) -> Result<u32> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes(
            b.try_into().map_err(|_| bad(self.path, "short"))?,
        ))
    }

    fn text(&mut self) -> Result<String> {
        let n = self.u32()? as usize;
        let b = self.take(n)?;
        String::from_utf8(b.to_vec()).map_err(|_| bad(self.path, "a name is not UTF-8"))
    }

    /// `len` elements of `T` here, then the padding to 8 bytes.
    fn array<T: Plain>(&mut self, len: usize) -> Result<Buf<T>> {
        let buf = Buf::mapped(self.map, self.at, len)
            .ok_or_else(|| bad(self.path, "an array does not fit in the file"))?;
        let bytes = len * std::mem::size_of::<T>();
        self.take(bytes + pad8(bytes))?;
        Ok(buf)
    }

    /// The weight arrays: edge ids strictly ascending, and f64 bits. The
    /// count was checked against the file's size by `array` before the map
    /// is built.
    fn weights(&mut self, n: usize) -> Result<HashMap<u64, f64>> {
        let edges: Buf<u64> = self.array(n)?;
        let bits: Buf<u64> = self.array(n)?;
        if edges.windows(2).any(|w| w[0] >= w[1]) {
            return Err(bad(self.path, "weighted edge ids are not ascending"));
        }
        Ok(edges
            .iter()
            .zip(bits.iter())
            .map(|(e, b)| (*e, f64::from_bits(*b)))
            .collect())
    }

    fn side(&mut self, nodes: usize, edges: usize) -> Result<Side> {
        let off_len = nodes
            .checked_add(1)
            .ok_or_else(|| bad(self.path, "too many nodes"))?;
        Ok(Side {
            off: self.array(off_len)?,
            target: self.array(edges)?,
            edge: self.array(edges)?,
            rel: self.array(edges)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn padding_rounds_up_to_eight() {
        assert_eq!((pad8(0), pad8(1), pad8(8), pad8(13)), (0, 7, 0, 3));
    }
}
