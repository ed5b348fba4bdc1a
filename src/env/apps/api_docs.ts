import { formatApiDoc } from "../api";
import { ApiError, type AppSpec } from "../types";
import { type AppModule, defineApp, req } from "./common";

/** Documentation of every app, generated from the API specs themselves. */
export function makeApiDocs(apps: () => AppSpec[]): AppModule {
  const findApp = (name: string): AppSpec => {
    const app = apps().find((a) => a.name === name);
    if (!app)
      throw new ApiError(
        `No app named '${name}'. Apps: ${apps()
          .map((a) => a.name)
          .join(", ")}.`,
      );
    return app;
  };
  return {
    spec: defineApp("api_docs", "Documentation of the apps and their APIs.", [
      {
        name: "show_app_descriptions",
        description: "List the apps with a one-line description each.",
        returns: "[{name, description}]",
        auth: false,
        handler: () => apps().map((a) => ({ name: a.name, description: a.description })),
      },
      {
        name: "show_api_descriptions",
        description: "List an app's APIs with a one-line description each.",
        params: [req("app_name", "string", "an app name")],
        returns: "[{name, description}]",
        errors: ["unknown app"],
        auth: false,
        handler: (_ctx, args) =>
          findApp(args.app_name as string).apis.map((a) => ({
            name: a.name,
            description: a.description,
          })),
      },
      {
        name: "show_api_doc",
        description: "Show one API's full documentation: parameters, result, errors.",
        params: [
          req("app_name", "string", "an app name"),
          req("api_name", "string", "an API name"),
        ],
        returns: "the documentation text",
        errors: ["unknown app", "unknown API"],
        auth: false,
        handler: (_ctx, args) => {
          const app = findApp(args.app_name as string);
          const api = app.apis.find((a) => a.name === args.api_name);
          if (!api)
            throw new ApiError(
              `No API '${args.api_name}' in ${app.name}. APIs: ${app.apis.map((a) => a.name).join(", ")}.`,
            );
          return formatApiDoc(api);
        },
      },
    ]),
  };
}
