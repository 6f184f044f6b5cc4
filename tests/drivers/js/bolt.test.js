// The official Neo4j JavaScript driver against `plexus serve` (started here
// on 127.0.0.1 with a fresh database and a port the system picks).
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { spawn, execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import neo4j from 'neo4j-driver'

const BIN = process.env.PLEXUS_BIN || 'plexus'
let dir, server, address

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'plexus-js-'))
  const db = join(dir, 'db')
  execFileSync(BIN, ['--db', db, 'init'])
  execFileSync(BIN, ['--db', db, 'user', 'add', 'app', '--role', 'admin'], { input: 'app-pw\n' })
  server = spawn(BIN, ['--db', db, 'serve', '--listen', '127.0.0.1:0'])
  address = await new Promise((resolve, reject) => {
    let log = ''
    server.stderr.on('data', d => {
      log += d
      const m = log.match(/serving bolt:\/\/([0-9.]+:[0-9]+)/)
      if (m) resolve(m[1])
    })
    server.on('exit', () => reject(new Error('plexus serve exited: ' + log)))
  })
})

after(() => {
  server.kill('SIGINT')
  rmSync(dir, { recursive: true, force: true })
})

const auth = () => neo4j.auth.basic('app', 'app-pw')

test('bolt:// auto-commit, nodes, relationships and element ids', async () => {
  const driver = neo4j.driver(`bolt://${address}`, auth())
  try {
    const session = driver.session()
    await session.run("CREATE (:Person {name: 'Ann'})-[:KNOWS {since: 2015}]->(:Person {name: 'Bob'})")
    const res = await session.run('MATCH (a)-[r:KNOWS]->(b) RETURN a, r, b, elementId(a) AS ea')
    const rec = res.records[0]
    assert.equal(rec.get('a').properties.name, 'Ann')
    assert.equal(rec.get('a').elementId, rec.get('ea'))
    assert.equal(rec.get('r').type, 'KNOWS')
    assert.equal(rec.get('r').startNodeElementId, rec.get('a').elementId)
    assert.equal(rec.get('r').endNodeElementId, rec.get('b').elementId)
    assert.equal(res.summary.queryType, 'r')
    await session.close()
  } finally {
    await driver.close()
  }
})

test('neo4j:// routing, executeQuery, transactions and values', async () => {
  const driver = neo4j.driver(`neo4j://${address}`, auth())
  try {
    const { records } = await driver.executeQuery('RETURN $x AS x, date($d) AS d', {
      x: [neo4j.int(2).shiftLeft(40), 'é', null, { k: true }],
      d: '2024-02-29'
    })
    const [x, d] = [records[0].get('x'), records[0].get('d')]
    assert.ok(neo4j.int(2).shiftLeft(40).equals(x[0]))
    assert.deepEqual(x.slice(1), ['é', null, { k: true }])
    assert.equal(d.toString(), '2024-02-29')
    const session = driver.session({ fetchSize: 3 })
    const n = await session.executeWrite(async tx => {
      await tx.run('UNWIND range(1, 10) AS i CREATE (:Row {i: i})')
      const r = await tx.run('MATCH (r:Row) RETURN r.i AS i ORDER BY i')
      return r.records.map(r => r.get('i').toNumber())
    })
    assert.deepEqual(n, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10])
    const tx = session.beginTransaction()
    await tx.run('CREATE (:Gone)')
    await tx.rollback()
    const gone = await session.run('MATCH (g:Gone) RETURN count(g) AS c')
    assert.equal(gone.records[0].get('c').toNumber(), 0)
    await session.close()
  } finally {
    await driver.close()
  }
})

test('errors: syntax, wrong password, missing database', async () => {
  const driver = neo4j.driver(`bolt://${address}`, auth())
  try {
    await assert.rejects(driver.executeQuery('RETURN 1 +'), e => e.code === 'Neo.ClientError.Statement.SyntaxError')
    await assert.rejects(
      driver.executeQuery('RETURN 1', {}, { database: 'nope' }),
      e => e.code === 'Neo.ClientError.Database.DatabaseNotFound'
    )
  } finally {
    await driver.close()
  }
  const wrong = neo4j.driver(`bolt://${address}`, neo4j.auth.basic('app', 'nope'))
  try {
    await assert.rejects(wrong.verifyConnectivity(), e => e.code === 'Neo.ClientError.Security.Unauthorized')
  } finally {
    await wrong.close()
  }
})

test('EXPLAIN and PROFILE: the plan in the summary, PROFILE with its rows', async () => {
  const driver = neo4j.driver(`bolt://${address}`, auth())
  try {
    await driver.executeQuery('UNWIND range(1, 4) AS i CREATE (:Js {n: i})')
    const q = 'MATCH (x:Js) WHERE x.n > 2 RETURN x.n AS n ORDER BY n'
    const explained = await driver.executeQuery('EXPLAIN ' + q)
    assert.equal(explained.records.length, 0)
    assert.ok(explained.summary.hasPlan() && !explained.summary.hasProfile())
    assert.ok(explained.summary.plan.operatorType.length > 0)
    const profiled = await driver.executeQuery('PROFILE ' + q)
    assert.deepEqual(profiled.records.map(r => r.get('n').toNumber()), [3, 4])
    assert.ok(profiled.summary.hasProfile())
    assert.equal(typeof profiled.summary.profile.rows, 'number')
    assert.ok(profiled.summary.profile.children.length <= 1)
  } finally {
    await driver.close()
  }
})
