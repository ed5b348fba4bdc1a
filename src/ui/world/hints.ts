/** Example actions shown under the play input (clicking one puts it in the input). */
export const HINTS = [
  "supervisor.show_account_passwords()",
  "supervisor.show_profile()",
  "api_docs.show_app_descriptions()",
  'api_docs.show_api_descriptions(app_name="phone")',
  'api_docs.show_api_doc(app_name="phone", api_name="login")',
  'phone.login(username="", password="")',
  'supervisor.complete_task(answer="")',
];
