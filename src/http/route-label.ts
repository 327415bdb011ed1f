import type { RequestHandler } from 'express';

declare global {
  namespace Express {
    interface Locals {
      /** The route label of a request a mount serves (static files), for metrics and the access log (src/http/app.ts, observe). */
      routeLabel?: string;
    }
  }
}

/**
 * Names the requests a mount answers (`serve`), or refuses (an error: another method on its
 * file), in `http_requests_total` and the access log. A mount has no route of its own, so its
 * files would be counted as `unmatched`, which reads as a 404. What it passes on (an unknown
 * file) stays unnamed.
 */
export function labelRoute(label: string, serve: RequestHandler): RequestHandler {
  return (req, res, next) => {
    res.locals.routeLabel = label;
    serve(req, res, (error?: unknown) => {
      if (error === undefined) res.locals.routeLabel = undefined;
      next(error);
    });
  };
}
