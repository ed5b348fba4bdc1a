import type { TaskTemplate } from "../types";

export const PRODUCTIVITY_TEMPLATES: TaskTemplate[] = [];
