import type { TaskTemplate } from "../types";
import { payContact, payTotalReceived } from "./pay";

/** Every task template. Challenge templates (challenge: true) appear only in test_challenge. */
export const TEMPLATES: TaskTemplate[] = [payContact, payTotalReceived];
