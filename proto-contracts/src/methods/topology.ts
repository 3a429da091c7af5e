import type { z } from 'zod';
import { defineMethod } from '../method-def.ts';
import type { MethodDef } from '../method-def.ts';
import { requestOf } from '../schemas/common.ts';
import { TopologyProjection } from '../schemas/runtime.ts';
import { onControl } from './routing.ts';

/** TopologySnapshotRequest: only `identity` (its tenant may name another tenant, admin only). */
export const TopologySnapshotRequest = requestOf({});
export type TopologySnapshotRequest = z.infer<typeof TopologySnapshotRequest>;

/** topology.snapshot (R, XA). */
export const TOPOLOGY_METHODS: readonly MethodDef[] = [
  defineMethod({
    name: 'topology.snapshot',
    family: 'topology',
    ...onControl('topology.snapshot'),
    service: 'gateway',
    auth: ['R', 'XA'],
    crossing: { tenant: 'admin' },
    requestName: 'TopologySnapshotRequest',
    responseName: 'TopologyProjection',
    request: TopologySnapshotRequest,
    response: TopologyProjection,
    summary: 'Project the running topology: services, instances, endpoints.',
  }),
];
