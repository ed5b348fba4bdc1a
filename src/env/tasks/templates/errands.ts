import type { TaskTemplate } from "../types";

export const ERRANDS_TEMPLATES: TaskTemplate[] = [];
