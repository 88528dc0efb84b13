/**
 * A site like another whose one route extracts differently: a contributor's fix after a redesign
 * (test/integration/drift.test.ts), an extractor slow on purpose (integration/fixtures/busyShop.ts).
 */
import { defineSite, type Route, type Site } from '../../src/site/site.js';

type Extractor = NonNullable<Route['extract']>;

/** `site` with route `label` extracting by `replace(its own extractor)`; every other route as it was. */
export function withExtractor(
    site: Site,
    label: string,
    replace: (original: Extractor) => Extractor,
    name = site.name,
): Site {
    return defineSite({
        name,
        startUrls: site.startUrls,
        trackingParams: site.trackingParams,
        routes: Object.fromEntries(
            [...site.routes].map(([routeLabel, route]) => [
                routeLabel,
                routeLabel === label ? { ...route, extract: replace(route.extract!) } : route,
            ]),
        ),
    });
}
