import { hostDetector, processDetector, resourceFromAttributes } from '@opentelemetry/resources';
import type { DetectedResourceAttributes, Resource } from '@opentelemetry/resources';
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';

/**
 * The resource of this process's telemetry (traces and metrics), built from
 * what the caller read from its environment: the OTel semantic-convention
 * attributes of the service, the host and process detectors, and the
 * Kubernetes downward API.
 */
export interface ResourceOptions {
  /** `service.name` unless {@link ResourceOptions.serviceNameOverride} or `attributes` name another. */
  readonly serviceName: string;
  /** `OTEL_SERVICE_NAME`: wins over every other `service.name`. */
  readonly serviceNameOverride?: string;
  /** `service.version`: the build's version. */
  readonly serviceVersion?: string;
  /** `service.instance.id`: the replica's `INSTANCE_ID`. */
  readonly instanceId?: string;
  /** `k8s.pod.name`, `k8s.namespace.name`, `k8s.node.name` (the chart sets them from the downward API). */
  readonly k8s?: { readonly podName?: string; readonly namespaceName?: string; readonly nodeName?: string };
  /** `OTEL_RESOURCE_ATTRIBUTES`, parsed (see {@link parseKeyValueList}): win over everything but the override. */
  readonly attributes?: Readonly<Record<string, string>>;
  /** Run the host and process detectors. @default true */
  readonly detectors?: boolean;
}

/** The semantic-convention keys of the Kubernetes attributes (incubating in the conventions package). */
const K8S_KEYS = { podName: 'k8s.pod.name', namespaceName: 'k8s.namespace.name', nodeName: 'k8s.node.name' } as const;
const SERVICE_INSTANCE_ID = 'service.instance.id';

function defined(entries: readonly (readonly [string, string | undefined])[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of entries) if (value !== undefined && value !== '') out[key] = value;
  return out;
}

/**
 * The host and process detectors' attributes that are known at once. The
 * asynchronous ones (`host.id`, read from the machine id) are left out: a
 * resource with pending attributes holds every span back until they
 * settle, and `service.instance.id` already tells the replicas apart.
 */
function detected(): Record<string, NonNullable<DetectedResourceAttributes[string]>> {
  const out: Record<string, NonNullable<DetectedResourceAttributes[string]>> = {};
  for (const detector of [hostDetector, processDetector]) {
    for (const [key, value] of Object.entries(detector.detect().attributes ?? {})) {
      if (value !== undefined && value !== null && !(value instanceof Promise)) out[key] = value;
    }
  }
  return out;
}

/**
 * Builds the process resource, later sources winning: detected host and
 * process → service name, version, instance id and Kubernetes attributes →
 * `OTEL_RESOURCE_ATTRIBUTES` → `OTEL_SERVICE_NAME` (the OTel SDK
 * specification's order).
 */
export function buildResource(options: ResourceOptions): Resource {
  const k8s = options.k8s ?? {};
  const own = resourceFromAttributes(
    defined([
      [ATTR_SERVICE_NAME, options.serviceName],
      [ATTR_SERVICE_VERSION, options.serviceVersion],
      [SERVICE_INSTANCE_ID, options.instanceId],
      [K8S_KEYS.podName, k8s.podName],
      [K8S_KEYS.namespaceName, k8s.namespaceName],
      [K8S_KEYS.nodeName, k8s.nodeName],
    ]),
  );
  let resource = options.detectors === false ? own : resourceFromAttributes(detected()).merge(own);
  if (options.attributes !== undefined) resource = resource.merge(resourceFromAttributes({ ...options.attributes }));
  if (options.serviceNameOverride !== undefined && options.serviceNameOverride !== '') {
    resource = resource.merge(resourceFromAttributes({ [ATTR_SERVICE_NAME]: options.serviceNameOverride }));
  }
  return resource;
}

/**
 * Parses the W3C-baggage-like list of `OTEL_RESOURCE_ATTRIBUTES` and
 * `OTEL_EXPORTER_OTLP_HEADERS`: `key1=value1,key2=value2`, values
 * percent-decoded, blanks around members ignored. Returns the problem
 * instead of the map when a member has no `=`, an empty key, or a bad
 * percent escape.
 */
export function parseKeyValueList(text: string): Record<string, string> | { readonly problem: string } {
  const out: Record<string, string> = {};
  for (const member of text.split(',')) {
    if (member.trim() === '') continue;
    const at = member.indexOf('=');
    if (at <= 0) return { problem: `"${member.trim()}" is not key=value` };
    const key = member.slice(0, at).trim();
    if (key === '') return { problem: `"${member.trim()}" has an empty key` };
    try {
      out[key] = decodeURIComponent(member.slice(at + 1).trim());
    } catch {
      return { problem: `the value of ${key} is not percent-encoded correctly` };
    }
  }
  return out;
}
