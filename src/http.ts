export function agentapiUrl(port: number, route: string): string {
  return `http://127.0.0.1:${port}${route}`;
}

export async function getJson<T>(
  url: string,
  timeoutMs: number,
): Promise<{ ok: true; status: number; body: T } | { ok: false; error: string }> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
    if (!response.ok) return { ok: false, error: `HTTP ${response.status}` };
    return { ok: true, status: response.status, body: (await response.json()) as T };
  } catch (error) {
    return { ok: false, error: (error as Error).message };
  }
}

/** POSTs JSON to AgentAPI; redirects are never followed. */
export async function postJson(
  url: string,
  body: unknown,
  timeoutMs: number,
): Promise<{ ok: true; status: number } | { ok: false; error: string }> {
  try {
    const response = await fetch(url, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body),
      redirect: "manual",
      signal: AbortSignal.timeout(timeoutMs),
    });
    await response.arrayBuffer().catch(() => undefined);
    return response.ok ? { ok: true, status: response.status } : { ok: false, error: `HTTP ${response.status}` };
  } catch (error) {
    return { ok: false, error: (error as Error).message };
  }
}
