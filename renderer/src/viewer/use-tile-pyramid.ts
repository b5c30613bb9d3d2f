// The tile pyramid of a stored image: the service's tiles.json (contract §5), which says how deep
// the pyramid goes (past the image's own resolution for vector pages). Until it arrives, or when
// it cannot be read, the pyramid the OpenAPI document promises every image (servicePyramid), which
// stops at the image's own resolution.

import { useMemo } from 'react';
import { useQuery } from '@tanstack/react-query';
import type { TilePyramid } from '../api/types';
import { pyramidFromTilesJson, servicePyramid, tilesJsonUrl, type TilesJson } from './tiles';

export function useTilePyramid(
  uri: string | null,
  width: number,
  height: number,
): TilePyramid | null {
  const url = uri ? tilesJsonUrl(uri) : null;
  // Keyed by the path: the query (the signature) changes as URLs are re-signed, the image does not.
  const path = url ? url.split('?')[0] : null;
  const q = useQuery({
    queryKey: ['tiles.json', path],
    enabled: !!url,
    staleTime: Infinity,
    retry: 1,
    queryFn: async ({ signal }): Promise<TilesJson> => {
      const res = await fetch(url!, { signal });
      if (!res.ok) throw new Error(`tiles.json: HTTP ${res.status}`);
      return (await res.json()) as TilesJson;
    },
  });
  const data = q.data;
  // One object per (image, description): layers memoised on it keep their tiles.
  return useMemo(() => {
    if (!uri) return null;
    return (
      (data && pyramidFromTilesJson(uri, width, height, data)) ?? servicePyramid(uri, width, height)
    );
  }, [uri, width, height, data]);
}
