import type { TaskTemplate } from "../types";

export const COMMS_TEMPLATES: TaskTemplate[] = [];
