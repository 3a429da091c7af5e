import { useId } from 'react';

/**
 * A checkbox switching a list between the caller's session and the whole
 * tenant (`?scope=tenant`, the lists' `filter.tenant_ids`: the gateway lets
 * admins through and answers others 403, which the page shows).
 */
export function ScopeToggle({
  tenantWide,
  onChange,
  label = 'Whole tenant (admin)',
}: {
  readonly tenantWide: boolean;
  readonly onChange: (tenantWide: boolean) => void;
  readonly label?: string;
}) {
  const id = useId();
  return (
    <span className="scope-toggle">
      <input id={id} type="checkbox" checked={tenantWide} onChange={(e) => onChange(e.target.checked)} />
      <label htmlFor={id}>{label}</label>
    </span>
  );
}
