// report.mjs: how a test script ends. It runs main and prints one JSON line
// on stdout, {ok: true, ...results} or {ok: false, error, ...results so far},
// which the Go test decodes (runNode); the error's stack also goes to stderr.
export async function report(main, results) {
  try {
    await main();
    console.log(JSON.stringify({ ok: true, ...results }));
  } catch (e) {
    console.error(e);
    console.log(JSON.stringify({ ok: false, error: String(e?.stack ?? e), ...results }));
    process.exitCode = 1;
  }
}
