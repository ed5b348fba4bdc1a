import type { TaskTemplate } from "../types";
import { CHALLENGE_TEMPLATES } from "./challenge";
import { COMMS_TEMPLATES } from "./comms";
import { ERRANDS_TEMPLATES } from "./errands";
import { MONEY_TEMPLATES } from "./money";
import { MUSIC_TEMPLATES } from "./music";
import { payContact, payTotalReceived } from "./pay";
import { PRODUCTIVITY_TEMPLATES } from "./productivity";

/** Every task template. Challenge templates (challenge: true) appear only in test_challenge. */
export const TEMPLATES: TaskTemplate[] = [
  payContact,
  payTotalReceived,
  ...MONEY_TEMPLATES,
  ...COMMS_TEMPLATES,
  ...MUSIC_TEMPLATES,
  ...PRODUCTIVITY_TEMPLATES,
  ...ERRANDS_TEMPLATES,
  ...CHALLENGE_TEMPLATES,
];
