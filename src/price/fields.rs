//! The terms as the JSON documents carry them: one field per term, named by
//! [`Term::field`] (or [`Term::key`] for a source), flattened into the document that holds them
//! so that the field names stay the contract other tools read, and a document written before
//! a term existed still reads (the term absent).

use std::collections::{BTreeMap, HashMap};

use serde::de::DeserializeOwned;
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::Term;
use crate::stats::Estimate;

/// Reads the fields of a flattened holder: each term's value under `key(term)`, absent ones
/// `None`. Fields of other terms and of the holder's parent are left alone.
fn read_terms<'de, D, T>(
    d: D,
    key: impl Fn(Term) -> String,
) -> Result<[Option<T>; Term::COUNT], D::Error>
where
    D: Deserializer<'de>,
    T: DeserializeOwned,
{
    let mut map: HashMap<String, serde_json::Value> = HashMap::deserialize(d)?;
    let mut out: [Option<T>; Term::COUNT] = Default::default();
    for t in Term::ALL {
        if let Some(v) = map.remove(&key(t)) {
            out[t as usize] = serde_json::from_value(v).map_err(serde::de::Error::custom)?;
        }
    }
    Ok(out)
}

/// A filesystem's measured prices (`filesystems[].update_ns`, `query_ns`, …): each with its
/// interval, `None` where not measured. `update_ns` and `query_ns` are written as `null` when
/// unmeasured, the others left out.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct FsPrices(pub [Option<Estimate>; Term::COUNT]);

impl FsPrices {
    /// `term`'s price.
    pub fn get(&self, term: Term) -> Option<Estimate> {
        self.0[term as usize]
    }

    /// Sets `term`'s price.
    pub fn set(&mut self, term: Term, e: Option<Estimate>) {
        self.0[term as usize] = e;
    }
}

impl Serialize for FsPrices {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        for t in Term::LISTED {
            let v = self.get(t);
            if v.is_some() || matches!(t, Term::Update | Term::Query) {
                m.serialize_entry(t.field(), &v)?;
            }
        }
        m.end()
    }
}

impl<'de> Deserialize<'de> for FsPrices {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v: [Option<Option<Estimate>>; Term::COUNT] = read_terms(d, |t| t.field().into())?;
        Ok(FsPrices(v.map(Option::flatten)))
    }
}

/// The term prices one model was simulated with (`costs.update_ns`, `costs.update_ns_by_fs`,
/// …): each term's price on a filesystem without one of its own, and the filesystems of the
/// loop with one of their own (left out where none has).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TermCosts(pub [(f64, BTreeMap<String, f64>); Term::COUNT]);

impl TermCosts {
    /// `term`'s price on a filesystem without one of its own.
    pub fn default_ns(&self, term: Term) -> f64 {
        self.0[term as usize].0
    }

    /// `term`'s price per filesystem with one of its own.
    pub fn by_fs(&self, term: Term) -> &BTreeMap<String, f64> {
        &self.0[term as usize].1
    }

    /// The same keeping only the filesystems in `on`.
    pub fn only_on(mut self, on: &[&str]) -> Self {
        for (_, by_fs) in &mut self.0 {
            by_fs.retain(|fs, _| on.contains(&fs.as_str()));
        }
        self
    }
}

fn by_fs_field(t: Term) -> String {
    format!("{}_by_fs", t.field())
}

impl Serialize for TermCosts {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        for t in Term::LISTED {
            m.serialize_entry(t.field(), &self.default_ns(t))?;
            if !self.by_fs(t).is_empty() {
                m.serialize_entry(&by_fs_field(t), self.by_fs(t))?;
            }
        }
        m.end()
    }
}

impl<'de> Deserialize<'de> for TermCosts {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let mut map: HashMap<String, serde_json::Value> = HashMap::deserialize(d)?;
        let mut out = TermCosts::default();
        for t in Term::ALL {
            let e = serde::de::Error::custom;
            if let Some(v) = map.remove(t.field()) {
                out.0[t as usize].0 = serde_json::from_value(v).map_err(e)?;
            }
            if let Some(v) = map.remove(&by_fs_field(t)) {
                out.0[t as usize].1 = serde_json::from_value(v).map_err(e)?;
            }
        }
        Ok(out)
    }
}

/// Where each term's price came from, in words (`costs.sources.update`, …; empty in a file
/// written before the term was priced).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TermSources(pub [String; Term::COUNT]);

impl TermSources {
    /// Where `term`'s price came from.
    pub fn get(&self, term: Term) -> &str {
        &self.0[term as usize]
    }
}

impl Serialize for TermSources {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        for t in Term::LISTED {
            m.serialize_entry(t.key(), self.get(t))?;
        }
        m.end()
    }
}

impl<'de> Deserialize<'de> for TermSources {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v: [Option<String>; Term::COUNT] = read_terms(d, |t| t.key().into())?;
        Ok(TermSources(v.map(Option::unwrap_or_default)))
    }
}
