//! An LDBC-SNB-like social network, sized as seed 003 sizes it:
//! persons = 2000·SF, organisations = 200·SF, tags = 2000·SF,
//! forums = persons/25, posts = 5·persons, comments = posts; plus fixed
//! places (cities, countries, continents) and tag classes. KNOWS degrees
//! follow a power law with LDBC SF1's mean (about 18 per person). Every
//! label, relationship type and property the queries in
//! `../shared/suites/ldbc` read is present, timestamps (epoch
//! milliseconds) in causal order: a person exists before their friendships,
//! posts and forums; a post before its comments.

use crate::gen::{Column, EdgeRow, Generator, NodeRow};
use plexus::algo::Rng;
use plexus::Value;

const KNOWS_MEAN: f64 = 18.0;
const CITIES: u64 = 100;
const COUNTRIES: u64 = 20;
const CONTINENTS: u64 = 5;
const TAGCLASSES: u64 = 71;
const INTERESTS: u64 = 4;
const MEMBERS: u64 = 20;
const LIKES: u64 = 5;
/// 2010-01-01T00:00Z in milliseconds.
const EPOCH_2010: i64 = 1_262_304_000_000;
const DAY: i64 = 86_400_000;

const FIRST: [&str; 12] = [
    "Anna", "Bo", "Chen", "Dara", "Eli", "Femi", "Gita", "Hugo", "Ines", "Jon", "Kaya", "Luis",
];
const LAST: [&str; 10] = [
    "Ahmed", "Berg", "Costa", "Dube", "Eriksen", "Fujita", "Garcia", "Horvat", "Ivanova", "Jones",
];
const BROWSERS: [&str; 4] = ["Firefox", "Chrome", "Safari", "Opera"];
const LANGS: [&str; 5] = ["en", "es", "zh", "de", "pt"];

/// Labels of each kind (organisations and places get a second label of
/// their own kind below); posts and comments are both `Message`s.
static LABELS: [[&str; 1]; 8] = [
    ["Person"],
    ["Organisation"],
    ["Place"],
    ["TagClass"],
    ["Tag"],
    ["Forum"],
    ["Post"],
    ["Comment"],
];
const POST_LABELS: [&str; 2] = ["Post", "Message"];
const COMMENT_LABELS: [&str; 2] = ["Comment", "Message"];

fn c_offset(g: &Snb) -> u64 {
    g.counts[6]
}

/// Id prefixes of the node kinds, in id-range order.
const PREFIX: [&str; 8] = ["p", "o", "pl", "tc", "t", "f", "m", "c"];

/// Relationship kinds, in edge-range order: (type, how many per source).
const EDGE_KINDS: [&str; 20] = [
    "KNOWS",
    "HAS_INTEREST",
    "PERSON_IS_LOCATED_IN",
    "STUDY_AT",
    "WORK_AT",
    "HAS_MODERATOR",
    "HAS_MEMBER",
    "FORUM_HAS_TAG",
    "CONTAINER_OF",
    "POST_HAS_CREATOR",
    "POST_HAS_TAG",
    "POST_IS_LOCATED_IN",
    "COMMENT_HAS_CREATOR",
    "REPLY_OF",
    "COMMENT_IS_LOCATED_IN",
    "LIKES",
    "HAS_TYPE",
    "IS_SUBCLASS_OF",
    "IS_PART_OF",
    "ORG_IS_LOCATED_IN",
];

pub struct Snb {
    pub sf: f64,
    seed: u64,
    /// Nodes per kind, in `KINDS` order.
    counts: [u64; 8],
    /// First KNOWS edge index of each person (prefix sums of degrees).
    knows_off: Vec<u64>,
    /// Edges per kind, in `EDGE_KINDS` order.
    edge_counts: [u64; 20],
}

impl Snb {
    pub fn new(sf: f64, seed: u64) -> Snb {
        let persons = ((2000.0 * sf).round() as u64).max(50);
        let places = CITIES + COUNTRIES + CONTINENTS;
        let counts = [
            persons,
            (persons / 10).max(2),
            places,
            TAGCLASSES,
            persons,
            (persons / 25).max(1),
            5 * persons,
            5 * persons,
        ];
        let mut knows_off = Vec::with_capacity(persons as usize + 1);
        let mut total = 0u64;
        for i in 0..persons {
            knows_off.push(total);
            total += Self::knows_degree(seed, i, persons);
        }
        knows_off.push(total);
        let [p, o, _, tc, t, f, m, c] = counts;
        let edge_counts = [
            total,
            p * INTERESTS,
            p,
            p,
            p,
            f,
            f * MEMBERS,
            2 * f,
            m,
            m,
            2 * m,
            m,
            c,
            c,
            c,
            p * LIKES,
            t,
            tc - 1,
            CITIES + COUNTRIES,
            o,
        ];
        Snb {
            sf,
            seed,
            counts,
            knows_off,
            edge_counts,
        }
    }

    fn rng(seed: u64, stream: u64, i: u64) -> Rng {
        Rng::new(
            seed ^ stream.wrapping_mul(0x9E37_79B9_7F4A_7C15)
                ^ i.wrapping_mul(0xD1B5_4A32_D192_ED03),
        )
    }

    /// A Pareto(α = 2) degree scaled to the mean, capped at a tenth of the persons.
    fn knows_degree(seed: u64, i: u64, persons: u64) -> u64 {
        let u = Self::rng(seed, 10, i).unit().max(1e-9);
        let pareto = 1.0 / u.sqrt(); // mean 2 for α = 2
        ((KNOWS_MEAN / 2.0 * pareto) as u64).clamp(1, persons / 10 + 1)
    }

    pub fn persons(&self) -> u64 {
        self.counts[0]
    }

    /// The id of node `j` of kind `k`.
    fn id(k: usize, j: u64) -> String {
        format!("{}{j}", PREFIX[k])
    }

    fn created(&self, person: u64) -> i64 {
        EPOCH_2010 + (Self::rng(self.seed, 11, person).unit() * 900.0 * DAY as f64) as i64
    }

    fn post_date(&self, post: u64) -> i64 {
        let creator = self.post_creator(post);
        self.created(creator) + (Self::rng(self.seed, 12, post).unit() * 300.0 * DAY as f64) as i64
    }

    fn post_creator(&self, post: u64) -> u64 {
        Self::rng(self.seed, 13, post).below(self.persons() as usize) as u64
    }

    fn comment_post(&self, c: u64) -> u64 {
        Self::rng(self.seed, 14, c).below(self.counts[6] as usize) as u64
    }

    fn kind_of(ranges: &[u64], mut i: u64) -> (usize, u64) {
        for (k, n) in ranges.iter().enumerate() {
            if i < *n {
                return (k, i);
            }
            i -= n;
        }
        (ranges.len() - 1, i)
    }

    fn place(k: u64) -> u64 {
        k
    }
}

fn s(x: &str) -> Value {
    Value::from(x)
}

impl Generator for Snb {
    fn name(&self) -> String {
        format!("snb-sf{}", self.sf)
    }

    fn nodes(&self) -> u64 {
        self.counts.iter().sum()
    }

    fn edges(&self) -> u64 {
        self.edge_counts.iter().sum()
    }

    fn node(&self, i: u64) -> NodeRow {
        let (k, j) = Self::kind_of(&self.counts, i);
        let mut r = Self::rng(self.seed, 20 + k as u64, j);
        let mut labels: &'static [&'static str] = &LABELS[k];
        // LDBC's numeric ids; posts and comments share the Message id space.
        let ldbc_id = if k == 7 { c_offset(self) + j } else { j };
        let mut props = match k {
            0 => {
                let created = self.created(j);
                vec![
                    ("firstName", s(FIRST[r.below(FIRST.len())])),
                    ("lastName", s(LAST[r.below(LAST.len())])),
                    ("gender", s(if r.below(2) == 0 { "female" } else { "male" })),
                    (
                        "birthday",
                        Value::Int(EPOCH_2010 - (r.below(20_000) as i64 + 6000) * DAY),
                    ),
                    ("creationDate", Value::Int(created)),
                    (
                        "locationIP",
                        Value::String(format!(
                            "10.{}.{}.{}",
                            r.below(256),
                            r.below(256),
                            r.below(256)
                        )),
                    ),
                    ("browserUsed", s(BROWSERS[r.below(4)])),
                    ("speaks", Value::List(vec![s(LANGS[r.below(5)]), s("en")])),
                    (
                        "email",
                        Value::List(vec![Value::String(format!(
                            "{}@example.org",
                            Self::id(0, j)
                        ))]),
                    ),
                ]
            }
            1 => {
                labels = if j % 2 == 0 {
                    &["Organisation", "University"]
                } else {
                    &["Organisation", "Company"]
                };
                vec![
                    ("name", Value::String(format!("org{j}"))),
                    ("url", Value::String(format!("http://org{j}.example"))),
                ]
            }
            2 => {
                labels = if j < CITIES {
                    &["Place", "City"]
                } else if j < CITIES + COUNTRIES {
                    &["Place", "Country"]
                } else {
                    &["Place", "Continent"]
                };
                vec![
                    ("name", Value::String(format!("place{j}"))),
                    ("url", Value::String(format!("http://place{j}.example"))),
                ]
            }
            3 => vec![
                ("name", Value::String(format!("class{j}"))),
                ("url", Value::String(format!("http://class{j}.example"))),
            ],
            4 => vec![
                ("name", Value::String(format!("tag{j}"))),
                ("url", Value::String(format!("http://tag{j}.example"))),
            ],
            5 => {
                let moderator = j * 25 % self.persons();
                vec![
                    ("title", Value::String(format!("Forum {j}"))),
                    ("creationDate", Value::Int(self.created(moderator) + DAY)),
                ]
            }
            6 => {
                labels = &POST_LABELS;
                // As in LDBC, a post is a photo (an image file, no content)
                // or text (content, no image file): never an empty string,
                // which some engines load as null.
                let len = 1 + r.below(199) as i64;
                let body = if j % 10 == 0 {
                    ("imageFile", Value::String(format!("photo{j}.jpg")))
                } else {
                    ("content", Value::String("x".repeat(len as usize)))
                };
                vec![
                    ("creationDate", Value::Int(self.post_date(j))),
                    body,
                    ("length", Value::Int(if j % 10 == 0 { 0 } else { len })),
                    ("language", s(LANGS[r.below(5)])),
                    ("locationIP", s("10.0.0.1")),
                    ("browserUsed", s(BROWSERS[r.below(4)])),
                ]
            }
            _ => {
                labels = &COMMENT_LABELS;
                let len = 1 + r.below(99) as i64;
                let date =
                    self.post_date(self.comment_post(j)) + (r.unit() * DAY as f64) as i64 + 1;
                vec![
                    ("creationDate", Value::Int(date)),
                    ("content", Value::String("y".repeat(len as usize))),
                    ("length", Value::Int(len)),
                    ("locationIP", s("10.0.0.2")),
                    ("browserUsed", s(BROWSERS[r.below(4)])),
                ]
            }
        };
        props.insert(0, ("id", Value::Int(ldbc_id as i64)));
        NodeRow {
            id: Self::id(k, j),
            labels,
            props,
        }
    }

    fn edge(&self, i: u64) -> EdgeRow {
        let (k, j) = Self::kind_of(&self.edge_counts, i);
        let mut r = Self::rng(self.seed, 40 + k as u64, j);
        let c = &self.counts;
        let (persons, tags, forums, posts) = (c[0], c[4], c[5], c[6]);
        let pick = |r: &mut Rng, n: u64| r.below(n as usize) as u64;
        let mut props = vec![];
        let (sk, sj, dk, dj, rel) = match EDGE_KINDS[k] {
            "KNOWS" => {
                let a = self.knows_off.partition_point(|off| *off <= j) as u64 - 1;
                let mut b = pick(&mut r, persons - 1);
                if b >= a {
                    b += 1; // never a self-friendship
                }
                props.push((
                    "creationDate",
                    Value::Int(
                        self.created(a).max(self.created(b)) + pick(&mut r, 365) as i64 * DAY,
                    ),
                ));
                (0, a, 0, b, "KNOWS")
            }
            "HAS_INTEREST" => (0, j / INTERESTS, 4, pick(&mut r, tags), "HAS_INTEREST"),
            "PERSON_IS_LOCATED_IN" => (0, j, 2, Self::place(pick(&mut r, CITIES)), "IS_LOCATED_IN"),
            "STUDY_AT" => {
                props.push(("classYear", Value::Int(2000 + pick(&mut r, 12) as i64)));
                (0, j, 1, pick(&mut r, c[1] / 2) * 2, "STUDY_AT")
            }
            "WORK_AT" => {
                props.push(("workFrom", Value::Int(2000 + pick(&mut r, 12) as i64)));
                (
                    0,
                    j,
                    1,
                    (pick(&mut r, c[1] / 2) * 2 + 1).min(c[1] - 1),
                    "WORK_AT",
                )
            }
            "HAS_MODERATOR" => (5, j, 0, j * 25 % persons, "HAS_MODERATOR"),
            "HAS_MEMBER" => {
                let (f, p) = (j / MEMBERS, pick(&mut r, persons));
                props.push((
                    "joinDate",
                    Value::Int(self.created(p).max(self.created(f * 25 % persons)) + 2 * DAY),
                ));
                (5, f, 0, p, "HAS_MEMBER")
            }
            "FORUM_HAS_TAG" => (5, j / 2, 4, pick(&mut r, tags), "HAS_TAG"),
            "CONTAINER_OF" => (5, pick(&mut r, forums), 6, j, "CONTAINER_OF"),
            "POST_HAS_CREATOR" => (6, j, 0, self.post_creator(j), "HAS_CREATOR"),
            "POST_HAS_TAG" => {
                // Two distinct tags per post, so that tags co-occur (IC6).
                let first = pick(&mut Self::rng(self.seed, 99, j / 2), tags);
                (6, j / 2, 4, (first + j % 2) % tags, "HAS_TAG")
            }
            // Universities are in cities, companies in countries (IC1, IC11).
            "ORG_IS_LOCATED_IN" => (
                1,
                j,
                2,
                if j % 2 == 0 {
                    pick(&mut r, CITIES)
                } else {
                    CITIES + pick(&mut r, COUNTRIES)
                },
                "IS_LOCATED_IN",
            ),
            "POST_IS_LOCATED_IN" => (6, j, 2, CITIES + pick(&mut r, COUNTRIES), "IS_LOCATED_IN"),
            "COMMENT_HAS_CREATOR" => (7, j, 0, pick(&mut r, persons), "HAS_CREATOR"),
            "REPLY_OF" => (7, j, 6, self.comment_post(j), "REPLY_OF"),
            "COMMENT_IS_LOCATED_IN" => (7, j, 2, CITIES + pick(&mut r, COUNTRIES), "IS_LOCATED_IN"),
            "LIKES" => {
                let (p, m) = (j / LIKES, pick(&mut r, posts));
                props.push((
                    "creationDate",
                    Value::Int(self.created(p).max(self.post_date(m)) + DAY),
                ));
                (0, p, 6, m, "LIKES")
            }
            "HAS_TYPE" => (4, j, 3, pick(&mut r, TAGCLASSES), "HAS_TYPE"),
            "IS_SUBCLASS_OF" => (3, j + 1, 3, pick(&mut r, j + 1), "IS_SUBCLASS_OF"),
            _ => {
                // IS_PART_OF: cities in countries, countries in continents.
                let (from, to) = if j < CITIES {
                    (j, CITIES + j % COUNTRIES)
                } else {
                    (j, CITIES + COUNTRIES + (j - CITIES) % CONTINENTS)
                };
                (2, from, 2, to, "IS_PART_OF")
            }
        };
        EdgeRow {
            id: format!("r{i}"),
            src: Self::id(sk, sj),
            dst: Self::id(dk, dj),
            rel_type: rel,
            props,
        }
    }

    fn node_props(&self) -> Vec<Column> {
        vec![("creationDate", "int")]
    }

    fn edge_props(&self) -> Vec<Column> {
        vec![("creationDate", "int")]
    }

    fn types(&self) -> Vec<&'static str> {
        vec![
            "KNOWS",
            "HAS_INTEREST",
            "IS_LOCATED_IN",
            "STUDY_AT",
            "WORK_AT",
            "HAS_MODERATOR",
            "HAS_MEMBER",
            "HAS_TAG",
            "CONTAINER_OF",
            "HAS_CREATOR",
            "REPLY_OF",
            "LIKES",
            "HAS_TYPE",
            "IS_SUBCLASS_OF",
            "IS_PART_OF",
        ]
    }
}
