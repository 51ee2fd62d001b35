// Every error the API answers is RFC 9457 application/problem+json with a stable `code`.

/** A problem+json body. */
export interface Problem {
  type?: string;
  title?: string;
  status?: number;
  detail?: string;
  code?: string;
  errors?: { field: string; message: string }[] | null;
  [extra: string]: unknown;
}

/** A non-2xx answer, carrying its problem+json body. */
export class HansonError extends Error {
  readonly status: number;
  readonly code: string;
  readonly problem: Problem;

  constructor(status: number, problem: Problem) {
    super(`${status} ${problem.code ?? 'error'}: ${problem.detail ?? problem.title ?? 'the request failed'}`);
    this.name = 'HansonError';
    this.status = status;
    this.code = problem.code ?? 'unknown';
    this.problem = problem;
  }

  /** The error of a response whose body is problem+json (or anything else). */
  static async of(response: Response): Promise<HansonError> {
    const text = await response.text().catch(() => '');
    let problem: Problem;
    try {
      problem = JSON.parse(text) as Problem;
    } catch {
      problem = { status: response.status, detail: text.slice(0, 200) };
    }
    return new HansonError(response.status, problem);
  }
}

/**
 * The body of a successful openapi-fetch call, or a HansonError for a problem answer:
 * `const market = unwrap(await api.GET('/v1/markets/{market_id}', { params: { path: { market_id } } }))`.
 */
export function unwrap<T>(result: { data?: T; error?: unknown; response: Response }): T {
  if (result.response.ok && result.data !== undefined) return result.data;
  const problem = (result.error ?? {}) as Problem;
  throw new HansonError(result.response.status, typeof problem === 'object' ? problem : { detail: String(problem) });
}
