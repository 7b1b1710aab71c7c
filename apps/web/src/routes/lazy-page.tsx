import { Skeleton, Stack } from '@mantine/core';
import { type ComponentType, lazy, Suspense } from 'react';

export function PageSkeleton() {
  return (
    <Stack gap="md" role="status" aria-busy="true" aria-label="Loading the page">
      <Skeleton height={34} width="40%" />
      <Skeleton height={18} width="70%" />
      <Skeleton height={220} />
    </Stack>
  );
}

/**
 * A page in its own chunk: `load` is called by the route's loader too, so the code and the
 * data are fetched side by side.
 */
export function lazyPage<P extends object, M extends Record<string, unknown>>(
  load: () => Promise<M>,
  pick: (module: M) => ComponentType<P>,
): (props: P) => React.JSX.Element {
  const Page = lazy(() => load().then((module) => ({ default: pick(module) })));
  return function LazyPage(props: P) {
    return (
      <Suspense fallback={<PageSkeleton />}>
        <Page {...props} />
      </Suspense>
    );
  };
}
