// The server's answers (web/API.md). An error answer carries the message
// ms-analyze would print: it is shown as it is.

export class ApiError extends Error {}

export async function getJson(path, signal) {
  let r;
  try {
    r = await fetch(path, { signal });
  } catch (e) {
    if (e.name === "AbortError") throw e;
    throw new ApiError(`cannot reach the server for ${path} (${e.message}): is microscope serve still running?`);
  }
  const text = await r.text();
  let j;
  try {
    j = JSON.parse(text);
  } catch {
    throw new ApiError(`${path}: the server answered ${r.status} with no JSON`);
  }
  if (!r.ok) throw new ApiError(j && j.error ? j.error : `${path}: the server answered ${r.status}`);
  return j;
}
