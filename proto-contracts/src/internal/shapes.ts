import { z } from 'zod';

/** The owner triple most internal bodies name: whose session the call is about. */
export const tripleShape = {
  tenant: z.string().min(1),
  user: z.string().min(1),
  session: z.string().min(1),
};

/** A body that is exactly an owner triple. */
export const OwnerTriple = z.strictObject(tripleShape);
export type OwnerTriple = z.infer<typeof OwnerTriple>;

/** A count of things a call deleted or discarded. */
export const Count = z.int().nonnegative();
