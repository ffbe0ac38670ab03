// Campaign dialing (docs/campaigns.md): voiceapi schedules, this loop only dials. It
// claims due dial tasks, hands each to `place` (which dials and runs the call, reporting it
// as any outbound call: ongoing once answered, then its end), and asks again when voiceapi
// says the next task falls due, or after `idleMs` when it says nothing.
//
// A task's call must be reported ongoing before its lease ends (lease_seconds), or voiceapi
// gives the attempt back and fails the call (dial_lease_expired): `place` should not queue
// tasks behind each other, so the loop claims no more than `capacity` calls at once.

const DEFAULT_IDLE_MS = 15_000;
const MAX_WAIT_MS = 60_000;

/**
 * Runs until signal aborts. Each task becomes one `place(task)` promise; the loop counts
 * them against capacity and claims only for free places.
 * @param {object} opts
 * @param {import('./voiceapi.js').VoiceAPI} opts.voiceapi a calls:runtime client
 * @param {(task: object) => Promise<void>} opts.place dials and runs one task's call
 * @param {number} [opts.capacity] calls at once (1 to 100)
 * @param {number} [opts.leaseSeconds] how long a task waits for its call to start
 * @param {number} [opts.idleMs] the wait when nothing is due and voiceapi names no time
 * @param {AbortSignal} [opts.signal]
 * @param {object} [opts.log]
 * @param {() => number} [opts.now]
 * @param {(ms: number, signal?: AbortSignal) => Promise<void>} [opts.sleep]
 */
export async function runDialer({
  voiceapi, place, capacity = 10, leaseSeconds = 60, idleMs = DEFAULT_IDLE_MS, signal,
  log = console, now = Date.now, sleep = abortableSleep,
}) {
  const running = new Set();
  let wake = null; // resolves the wait when a call frees a place
  while (!signal?.aborted) {
    const free = capacity - running.size;
    let wait = idleMs;
    if (free > 0) {
      try {
        const { tasks, next_due_at: nextDue } = await voiceapi.claimDialTasks({ max: free, lease_seconds: leaseSeconds });
        for (const task of tasks) {
          const p = place(task)
            .catch((err) => log.error?.(`dial task ${task.recipient_id} attempt ${task.attempt}: ${err.message}`))
            .finally(() => {
              running.delete(p);
              wake?.();
            });
          running.add(p);
        }
        if (tasks.length === free) wait = 0; // more may be due at once
        else if (nextDue) wait = Math.min(Math.max(Date.parse(nextDue) - now(), 0), MAX_WAIT_MS);
      } catch (err) {
        log.warn?.(`claiming dial tasks failed: ${err.message}`);
        wait = (err.retryAfter ?? idleMs / 1000) * 1000;
      }
    }
    if (wait > 0 || free <= 0) {
      await Promise.race([sleep(free <= 0 ? MAX_WAIT_MS : wait, signal), new Promise((r) => (wake = r))]);
      wake = null;
    }
  }
  await Promise.allSettled(running);
}

function abortableSleep(ms, signal) {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(t);
      resolve();
    }, { once: true });
  });
}
