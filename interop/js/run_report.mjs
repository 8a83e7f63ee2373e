// run_report.mjs: what the scripts that drive the TypeScript client
// report of a run, and the signals its teardown ladder sends, in one
// place for harness.mjs and replay.mjs.

// summary is the part of a run() result that the Go tests compare.
export function summary(r) {
  return {
    sessionId: r.sessionId,
    finalResponse: r.finalResponse,
    eventTypes: r.events.map((e) => e.type),
    methods: r.notifications.map((n) => n.method),
    sessions: [...new Set(r.notifications.map((n) => n.params.sessionId ?? n.params.childSessionId))],
    turnEnd: r.events.filter((e) => e.type === 'turn/end').map((e) => e.data.reason),
  };
}

// signalsOf records the signals sent to child from now on (the client's
// teardown ladder sends SIGTERM, then SIGKILL, through child.kill).
export function signalsOf(child) {
  const sent = [];
  const kill = child.kill.bind(child);
  child.kill = (signal) => {
    sent.push(signal ?? 'SIGTERM');
    return kill(signal);
  };
  return sent;
}
