//! `plexus-bench knowledge`: claims, rules and modal entailment on Plexus
//! (`plexus::knowledge`, in this process) and GestaltDB (its claim API,
//! `run_rules`, `maintain_truth` and `entails`, in a Python process of the
//! peers' virtualenv), side by side on the same claims and questions.
//!
//! The claims: people who work for companies (one in ten also denied by an
//! auditor), companies that are members of industries, a chain of `ANC`
//! links, and worlds an agent believes possible. Measured: the write rate
//! (all claims in one commit), the status lookup p50, a rule run (an
//! affiliation join and the chain's transitive closure), truth maintenance
//! after one chain link is retracted, and the entailment p50. Every status,
//! count and entailment comes from each engine and must agree with the
//! other's and with the generator's expectation, or the run fails.

use crate::percentile;
use plexus::knowledge::{
    accessibility, claim_status, create_rule, entails, maintain_truth, run_rules, Atom, Formula,
    Frame, ModalLimits, Modality, RunOptions,
};
use plexus::temporal::{
    commit_versions, ClaimObject, ClaimState, Interval, Kind, Polarity, VersionWrite,
};
use plexus::{Database, Options as DbOptions};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// `plexus-bench knowledge`, as its flags give it.
#[derive(clap::Args)]
pub struct Options {
    /// People (each works for one of people/50 companies). GestaltDB's
    /// rule run and maintenance grow faster than linearly: at 200 they take
    /// it about a minute.
    #[arg(long, default_value_t = 200)]
    pub people: usize,
    /// Links of the ANC chain (its closure is derived).
    #[arg(long, default_value_t = 10)]
    pub chain: usize,
    /// Worlds the agent believes possible.
    #[arg(long, default_value_t = 4)]
    pub worlds: usize,
    /// Status lookups and entailment questions.
    #[arg(long, default_value_t = 20)]
    pub queries: usize,
    /// Engines, comma-separated: `plexus`, `gestaltdb`.
    #[arg(long, value_delimiter = ',', default_value = "plexus,gestaltdb")]
    pub engines: Vec<String>,
    /// The peers' virtualenv (made on first use).
    #[arg(long)]
    pub venv: Option<PathBuf>,
    /// Where the databases go (a temporary folder by default).
    #[arg(long)]
    pub work: Option<PathBuf>,
    /// Also write the results here (markdown; JSON lines beside it).
    #[arg(long)]
    pub out: Option<PathBuf>,
}

type Res<T> = Result<T, Box<dyn std::error::Error + Send + Sync>>;

/// The instant every question is asked at.
const AT: i64 = 1;

/// A claim of the workload: subject, predicate, object, agent, world, denial.
type Row = (String, String, String, String, String, bool);

struct Workload {
    claims: Vec<Row>,
    /// (subject, predicate, object) and the expected status.
    statuses: Vec<([String; 3], &'static str)>,
    /// Rules as (name, body, head).
    rules: Vec<(String, Vec<[String; 3]>, [String; 3])>,
    retract: Row,
    expect_derived: usize,
    expect_retracted: usize,
    /// Accessibility links of the agent `ann`: from, to, frame.
    links: Vec<(String, String, &'static str)>,
    /// (modality, subject, predicate, object) and the expected status.
    entails: Vec<(&'static str, [String; 3], &'static str)>,
}

fn row(s: String, p: &str, o: String, agent: &str, world: &str, negative: bool) -> Row {
    (s, p.into(), o, agent.into(), world.into(), negative)
}

fn workload(o: &Options) -> Workload {
    let companies = (o.people / 50).max(1);
    let mut claims = Vec::new();
    for i in 0..o.people {
        let c = format!("c{}", i % companies);
        claims.push(row(
            format!("p{i}"),
            "WORKS_FOR",
            c.clone(),
            "hr",
            "default",
            false,
        ));
        if i.is_multiple_of(10) {
            claims.push(row(
                format!("p{i}"),
                "WORKS_FOR",
                c,
                "audit",
                "default",
                true,
            ));
        }
    }
    for j in 0..companies {
        let g = format!("g{}", j % 10);
        claims.push(row(
            format!("c{j}"),
            "MEMBER_OF",
            g,
            "registry",
            "default",
            false,
        ));
    }
    for k in 0..o.chain {
        let (a, b) = (format!("n{k}"), format!("n{}", k + 1));
        claims.push(row(a, "ANC", b, "genealogy", "default", false));
    }
    let mut links = Vec::new();
    for w in 0..o.worlds {
        let world = format!("w{w}");
        for frame in ["belief", "modal"] {
            links.push(("real".to_string(), world.clone(), frame));
        }
        claims.push(row("sky".into(), "IS", "rain".into(), "obs", &world, false));
        claims.push(row(
            "sky".into(),
            "IS",
            "sun".into(),
            "obs",
            &world,
            w % 2 == 1,
        ));
    }
    let statuses = (0..o.queries)
        .map(|q| {
            let i = (q * 7919) % o.people.max(1);
            let c = i % companies;
            if q % 5 == 4 {
                // A company no claim names.
                let other = format!("c{}", c + companies);
                return ([format!("p{i}"), "WORKS_FOR".into(), other], "unknown");
            }
            let status = if i.is_multiple_of(10) {
                "both"
            } else {
                "supported"
            };
            (
                [format!("p{i}"), "WORKS_FOR".into(), format!("c{c}")],
                status,
            )
        })
        .collect();
    let t = |s: &str, p: &str, o: &str| [s.to_string(), p.to_string(), o.to_string()];
    let rules = vec![
        (
            "affiliation".to_string(),
            vec![t("?p", "WORKS_FOR", "?c"), t("?c", "MEMBER_OF", "?g")],
            t("?p", "AFFILIATED_WITH", "?g"),
        ),
        (
            "ancestry".to_string(),
            vec![t("?x", "ANC", "?y"), t("?y", "ANC", "?z")],
            t("?x", "ANC", "?z"),
        ),
    ];
    let nodes = o.chain + 1;
    let cut = o.chain / 2;
    let (left, right) = (cut + 1, nodes - cut - 1);
    let retract = row(
        format!("n{cut}"),
        "ANC",
        format!("n{}", cut + 1),
        "genealogy",
        "default",
        false,
    );
    let both_worlds = o.worlds >= 2;
    let entails = (0..o.queries)
        .map(|q| match q % 3 {
            0 => ("BELIEVES", t("sky", "IS", "rain"), "supported"),
            1 => (
                "NECESSARY",
                t("sky", "IS", "sun"),
                if both_worlds { "refuted" } else { "supported" },
            ),
            _ => ("POSSIBLE", t("sky", "IS", "sun"), "supported"),
        })
        .collect();
    Workload {
        claims,
        statuses,
        rules,
        retract,
        expect_derived: o.people + nodes * (nodes - 1) / 2 - o.chain,
        expect_retracted: left * right - 1,
        links,
        entails,
    }
}

/// What an engine answered, and how long it took.
struct Outcome {
    version: String,
    write_s: f64,
    statuses: Vec<String>,
    status_us: Vec<f64>,
    derived: usize,
    run_s: f64,
    retracted: usize,
    maintain_s: f64,
    /// Plexus: a maintenance pass over every claim (GestaltDB: NaN).
    full_maintain_s: f64,
    entailments: Vec<String>,
    entail_us: Vec<f64>,
}

fn claim(r: &Row) -> ClaimState {
    ClaimState {
        polarity: if r.5 {
            Polarity::Negative
        } else {
            Polarity::Positive
        },
        world: r.4.clone(),
        ..ClaimState::new(&r.0, &r.1, ClaimObject::Entity(r.2.clone()), &r.3)
    }
}

fn run_plexus(work: &Path, w: &Workload) -> Res<Outcome> {
    let db = Database::create(work.join("plexus"), DbOptions::default())?;
    let s = db.storage();
    let links = w.links.iter().map(|(from, to, frame)| -> Res<ClaimState> {
        Ok(accessibility("ann", from, to, Frame::parse(frame)?))
    });
    let writes = w
        .claims
        .iter()
        .map(|r| Ok(claim(r)))
        .chain(links)
        .map(|c| Ok(VersionWrite::assert_claim(c?, Interval::from(0))))
        .collect::<Res<Vec<_>>>()?;
    let t = Instant::now();
    commit_versions(s, "default", &writes)?;
    let write_s = t.elapsed().as_secs_f64();
    let mut statuses = Vec::new();
    let mut status_us = Vec::new();
    for ([subj, p, o], _) in &w.statuses {
        let t = Instant::now();
        let r = db.read("default")?;
        let a = claim_status(
            &r,
            "default",
            subj,
            p,
            &ClaimObject::Entity(o.clone()),
            None,
            AT,
        )?;
        status_us.push(t.elapsed().as_secs_f64() * 1e6);
        statuses.push(a.status.name().to_string());
    }
    for (name, body, head) in &w.rules {
        let atoms = body
            .iter()
            .map(|a| Atom::parse(&a[0], &a[1], &a[2]))
            .collect::<Result<Vec<_>, _>>()?;
        create_rule(
            s,
            "default",
            name,
            atoms,
            Atom::parse(&head[0], &head[1], &head[2])?,
            None,
        )?;
    }
    let opts = RunOptions {
        at: Some(AT),
        ..RunOptions::default()
    };
    let t = Instant::now();
    let run = run_rules(s, "default", &opts)?;
    let run_s = t.elapsed().as_secs_f64();
    // A first pass reads every claim (and records what each conclusion
    // rests on); it finds nothing to change after a run.
    let t = Instant::now();
    let full = maintain_truth(s, "default", &opts)?;
    let full_maintain_s = t.elapsed().as_secs_f64();
    if full.incremental || !full.versions.is_empty() {
        return Err("the first maintenance pass should read every claim and change nothing".into());
    }
    let gone = claim(&w.retract).claim_id();
    commit_versions(
        s,
        "default",
        &[VersionWrite::retract(Kind::Claim, &gone, Interval::from(0)).reason("benchmark")],
    )?;
    let t = Instant::now();
    let tm = maintain_truth(s, "default", &opts)?;
    let maintain_s = t.elapsed().as_secs_f64();
    if !tm.incremental {
        return Err("the pass after the retraction should start from it".into());
    }
    let mut entailments = Vec::new();
    let mut entail_us = Vec::new();
    for (m, [subj, p, o], _) in &w.entails {
        let f = Formula::Atom {
            subject: subj.clone(),
            predicate: p.clone(),
            object: ClaimObject::Entity(o.clone()),
            agent: None,
        };
        let t = Instant::now();
        let r = db.read("default")?;
        let m = Modality::parse(m).ok_or("a modality of the workload")?;
        let e = entails(&r, "ann", f, m, "real", AT, ModalLimits::default())?;
        entail_us.push(t.elapsed().as_secs_f64() * 1e6);
        entailments.push(e.status.name().to_string());
    }
    Ok(Outcome {
        version: env!("CARGO_PKG_VERSION").into(),
        write_s,
        statuses,
        status_us,
        derived: run.asserted,
        run_s,
        retracted: tm.retracted,
        maintain_s,
        full_maintain_s,
        entailments,
        entail_us,
    })
}

fn run_gestalt(work: &Path, o: &Options, w: &Workload) -> Res<Outcome> {
    let atom = |a: &[String; 3]| json!({"subject": a[0], "predicate": a[1], "object": a[2]});
    let job = json!({
        "path": work.join("gestalt"),
        "at": AT,
        "claims": w.claims.iter().map(|r| json!([r.0, r.1, r.2, r.3, r.4, r.5])).collect::<Vec<_>>(),
        "status_queries": w.statuses.iter().map(|(a, _)| json!(a)).collect::<Vec<_>>(),
        "rules": w.rules.iter().map(|(n, b, h)| json!([n, b, h])).collect::<Vec<_>>(),
        "retract": json!([w.retract.0, w.retract.1, w.retract.2, w.retract.3, w.retract.4, w.retract.5]),
        "links": w.links.iter().map(|(f, t, k)| json!([f, t, k])).collect::<Vec<_>>(),
        "entails": w.entails.iter().map(|(m, a, _)| json!(["ann", atom(a), m, "real"])).collect::<Vec<_>>(),
    });
    let script = include_str!("../peers/knowledge.py");
    let r = crate::run_peer_script(o.venv.as_deref(), work, "knowledge", script, &job)?;
    let floats = |k: &str| -> Vec<f64> {
        r[k].as_array()
            .map(|a| a.iter().filter_map(|x| x.as_f64()).collect())
            .unwrap_or_default()
    };
    let strings = |k: &str| -> Vec<String> {
        r[k].as_array()
            .map(|a| {
                a.iter()
                    .map(|x| x.as_str().unwrap_or("?").to_string())
                    .collect()
            })
            .unwrap_or_default()
    };
    let count = |k: &str| r[k].as_u64().unwrap_or(u64::MAX) as usize;
    Ok(Outcome {
        version: r["version"].as_str().unwrap_or("?").into(),
        write_s: r["write_s"].as_f64().unwrap_or(f64::NAN),
        statuses: strings("statuses"),
        status_us: floats("status_us"),
        derived: count("derived"),
        run_s: r["run_s"].as_f64().unwrap_or(f64::NAN),
        retracted: count("retracted"),
        maintain_s: r["maintain_s"].as_f64().unwrap_or(f64::NAN),
        full_maintain_s: f64::NAN,
        entailments: strings("entailments"),
        entail_us: floats("entail_us"),
    })
}

/// Fails unless the engine's answers are the expected ones.
fn check(engine: &str, w: &Workload, r: &Outcome) -> Res<()> {
    let wrong = |what: &str, got: String, want: String| -> Res<()> {
        Err(format!("{engine}: {what} gave {got}, expected {want}").into())
    };
    for ((q, want), got) in w.statuses.iter().zip(&r.statuses) {
        if got != want {
            return wrong(
                &format!("the status of {q:?}"),
                got.clone(),
                want.to_string(),
            );
        }
    }
    if r.statuses.len() != w.statuses.len() || r.entailments.len() != w.entails.len() {
        return wrong(
            "the number of answers",
            r.statuses.len().to_string(),
            w.statuses.len().to_string(),
        );
    }
    if r.derived != w.expect_derived {
        return wrong(
            "the rule run's conclusions",
            r.derived.to_string(),
            w.expect_derived.to_string(),
        );
    }
    if r.retracted != w.expect_retracted {
        return wrong(
            "truth maintenance's retractions",
            r.retracted.to_string(),
            w.expect_retracted.to_string(),
        );
    }
    for ((m, a, want), got) in w.entails.iter().zip(&r.entailments) {
        if got != want {
            return wrong(&format!("{m} {a:?}"), got.clone(), want.to_string());
        }
    }
    Ok(())
}

/// A duration: µs below a millisecond, ms below a second, else s.
fn time(us: f64) -> String {
    if us < 1000.0 {
        format!("{us:.1} µs")
    } else if us < 1e6 {
        format!("{:.1} ms", us / 1000.0)
    } else {
        format!("{:.2} s", us / 1e6)
    }
}

pub fn main(o: &Options) -> Res<()> {
    let (table, lines) = run(o)?;
    Ok(crate::report(o.out.as_deref(), &table, &lines)?)
}

/// Runs the workload: the markdown table and a JSON line per engine.
pub fn run(o: &Options) -> Res<(String, Vec<serde_json::Value>)> {
    let (work, temporary) = crate::work_dir(o.work.as_deref(), "knowledge")?;
    let w = workload(o);
    let mut table = format!(
        "Knowledge workload: {} claims ({} people, a chain of {} links, {} worlds), {} status \
         lookups, {} entailment questions; {} conclusions, {} retracted by maintenance\n\n\
         | engine | write (claims/s) | status p50 | rule run | truth maintenance | entails p50 |\n\
         |---|---:|---:|---:|---:|---:|\n",
        w.claims.len() + w.links.len(),
        o.people,
        o.chain,
        o.worlds,
        w.statuses.len(),
        w.entails.len(),
        w.expect_derived,
        w.expect_retracted,
    );
    let mut lines = Vec::new();
    let mut rows = Vec::new();
    let mut full = Vec::new();
    for engine in &o.engines {
        let dir = work.join(engine);
        std::fs::create_dir_all(&dir)?;
        let r = match engine.as_str() {
            "plexus" => run_plexus(&dir, &w)?,
            "gestaltdb" => run_gestalt(&dir, o, &w)?,
            other => return Err(format!("unknown engine '{other}' (plexus, gestaltdb)").into()),
        };
        check(engine, &w, &r)?;
        let figures = [
            (w.claims.len() + w.links.len()) as f64 / r.write_s,
            percentile(&r.status_us, 0.5).unwrap_or(f64::NAN),
            r.run_s * 1e6,
            r.maintain_s * 1e6,
            percentile(&r.entail_us, 0.5).unwrap_or(f64::NAN),
        ];
        table.push_str(&format!(
            "| {engine} {} | {:.0} | {} | {} | {} | {} |\n",
            r.version,
            figures[0],
            time(figures[1]),
            time(figures[2]),
            time(figures[3]),
            time(figures[4]),
        ));
        lines.push(json!({"bench": "knowledge", "engine": engine, "version": r.version,
            "claims": w.claims.len() + w.links.len(), "claims_per_s": figures[0], "status_p50_us": figures[1],
            "rule_run_us": figures[2], "maintain_us": figures[3], "entails_p50_us": figures[4],
            "derived": r.derived, "retracted": r.retracted,
            "full_maintain_us": (!r.full_maintain_s.is_nan()).then_some(r.full_maintain_s * 1e6)}));
        rows.push(figures);
        if !r.full_maintain_s.is_nan() {
            full.push(format!(
                "{engine}'s truth maintenance is incremental: it starts from the retracted \
                 claim. A first pass over every claim, before the retraction, took {}.\n",
                time(r.full_maintain_s * 1e6)
            ));
        }
    }
    if let [ours, theirs] = &rows[..] {
        table.push_str(&format!(
            "| GestaltDB ÷ Plexus | {:.0}× | {:.0}× | {:.0}× | {:.0}× | {:.0}× |\n",
            ours[0] / theirs[0],
            theirs[1] / ours[1],
            theirs[2] / ours[2],
            theirs[3] / ours[3],
            theirs[4] / ours[4],
        ));
    }
    if !full.is_empty() {
        table.push('\n');
        table.push_str(&full.concat());
    }
    if temporary {
        let _ = std::fs::remove_dir_all(&work);
    }
    Ok((table, lines))
}
